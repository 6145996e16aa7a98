// Package messaging sends and receives SMS and WhatsApp messages through
// messaging channels (resources.md §3.3): validation of a send (numbers,
// encodings, templates, the WhatsApp reply window), the durable send outbox
// and the worker that drains it, one Provider adapter per provider protocol
// (Kannel's smsbox, Twilio Programmable Messaging, Meta's WhatsApp Cloud
// API), and the verified delivery-report and inbound callbacks.
//
// A send is accepted when its message row and outbox row are committed
// together; nothing reaches a provider inside a request. The worker claims
// outbox rows with a lease, so exactly one replica sends each message, and
// a message whose sender died is sent again only after its lease expires.
// Statuses only move forward (queued → sent → delivered/undelivered/failed
// → read), so callbacks arriving out of order cannot undo a later state.
package messaging

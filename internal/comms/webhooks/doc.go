// Package webhooks delivers events to the customers' URLs: tenant outbound
// webhooks, platform webhooks and system webhooks (resources.md §1.10,
// §1.11, §3.5).
//
// Events come from the transactional outbox: configuration changes
// (config.changed, office_mode.changed) and events recorded with the write
// they report (call.ended with its CDR, message.received, chat.message,
// webhook.auto_disabled, ...). The Service is an outbox subscriber: for each
// event it writes one delivery row per matching webhook (a unique key makes
// a redelivered event a no-op), so an event is never lost once committed.
// The dispatching replica (the one holding the outbox lease) attempts the
// due deliveries: each request is signed (HMAC-SHA256 over
// "<timestamp>.<body>" with the webhook's sealed secret), sent through a
// dialer that refuses loopback, private and link-local addresses (checked
// on the resolved address, so DNS rebinding cannot bypass it), bounded in
// time and in the response size read. Failures are retried with exponential
// backoff and jitter from a persisted next-attempt time; repeated failures
// disable the webhook with a reason until it is re-enabled.
package webhooks

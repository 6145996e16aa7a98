// Package crm is the CRM's behaviour beyond storing objects (resources.md
// §4): finding the contacts a phone number belongs to, and logging every
// ended call of a known contact as an activity on its timeline (an outbox
// subscriber to call.ended, so no call is missed or logged twice).
package crm

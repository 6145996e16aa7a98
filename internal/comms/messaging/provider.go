package messaging

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/switchboard/switchboard/internal/platform/egress"
)

// Outbound is one message handed to a provider.
type Outbound struct {
	MessageID int64
	Channel   *Channel
	To        string // E.164
	Body      string // free text; empty for a template
	// Template and Variables are set for template messages; Body then holds
	// the rendered text (for the record and SMS providers).
	Template  *Template
	Variables []string
	Encoding  string // gsm7 or ucs2 (SMS)
	// CallbackURL is where the provider reports delivery for this channel.
	CallbackURL string
}

// Sent is a provider's acceptance of a message.
type Sent struct {
	ProviderID string
}

// Provider speaks one provider's sending protocol.
type Provider interface {
	Send(ctx context.Context, m Outbound) (Sent, error)
}

// SendError is a provider's refusal. Transient ones (rate limits, 5xx,
// network trouble) are retried with backoff; the rest fail the message.
// Code and Message are what the message shows (error_code,
// error_message): a classified reason and a fixed text, never the
// provider's answer nor a connection error's text, which only Detail
// carries, for the server's log.
type SendError struct {
	Transient  bool
	Code       string // a classified reason, or the provider's documented error code ("21211", "131047")
	Message    string
	Detail     string // logged, never shown
	RetryAfter time.Duration
}

func (e *SendError) Error() string {
	kind := "permanent"
	if e.Transient {
		kind = "transient"
	}
	return fmt.Sprintf("provider refused (%s) %s: %s", kind, e.Code, e.Message)
}

// asSendError classifies err: a SendError as it is, anything else (a
// failure before the provider answered) as transient.
func asSendError(err error) *SendError {
	var se *SendError
	if errors.As(err, &se) {
		return se
	}
	return &SendError{Transient: true, Code: "send_failed", Message: "the message could not be handed to the provider", Detail: err.Error()}
}

// transportError classifies a request that got no answer.
func transportError(name string, err error) *SendError {
	se := &SendError{Transient: true, Code: "provider_unreachable", Message: "the provider could not be reached", Detail: name + ": " + err.Error()}
	switch egress.KindOf(err) {
	case egress.Refused:
		se.Transient, se.Code, se.Message = false, "provider_not_allowed", "this installation does not send to the provider's address"
	case egress.Timeout:
		se.Code, se.Message = "provider_timeout", "the provider did not answer in time"
	case egress.TooLarge:
		se.Code, se.Message = "provider_bad_response", "the provider's answer was too large"
	}
	return se
}

// httpStatusError classifies a provider's HTTP status: 408, 429 and 5xx
// are worth retrying, every other answer will fail the same way again.
// providerCode, when the provider's answer has one (Twilio's and Meta's
// numeric error codes), is the shown code; detail (the answer) is logged.
func httpStatusError(status, providerCode int, detail, retryAfter string) *SendError {
	e := &SendError{Code: "provider_rejected", Message: "the provider rejected the message",
		Detail: fmt.Sprintf("HTTP %d: %s", status, truncate(detail, 500))}
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		e.Code, e.Message = "provider_auth_failed", "the provider refused the channel's credentials"
	case status == http.StatusTooManyRequests:
		e.Transient, e.Code, e.Message = true, "provider_throttled", "the provider is limiting the send rate"
	case status == http.StatusRequestTimeout || status >= 500:
		e.Transient, e.Code, e.Message = true, "provider_unavailable", "the provider could not take the message now"
	case status >= 300 && status < 400:
		e.Message = "the provider answered with a redirect, which is not followed"
	}
	if providerCode != 0 {
		e.Code = strconv.Itoa(providerCode)
	}
	if d, err := time.ParseDuration(retryAfter + "s"); err == nil && d > 0 {
		e.RetryAfter = d
	}
	return e
}

// exchange sends a provider request and reads (a bounded amount of) the
// answer; a request that got no answer comes back as a classified
// *SendError.
func exchange(client *http.Client, req *http.Request, name string) (*http.Response, []byte, error) {
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, transportError(name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return nil, nil, transportError(name+" answer", err)
	}
	return resp, body, nil
}

// Providers builds the adapter for a channel's provider.
type Providers struct {
	// Client makes the requests to URLs tenants name (Kannel's
	// sendsms_url): an egress client, refusing private addresses unless
	// the operator opens them (default: nothing private).
	Client *http.Client
	// Platform makes the requests to the operator's provider URLs
	// (Twilio, Meta): an egress client without the address guard.
	Platform *http.Client
	// Hosts are the hosts tenants may name in provider URLs; a channel
	// naming another fails its sends (default: none).
	Hosts  egress.Hosts
	Twilio string // base URL, default https://api.twilio.com
	Meta   string // base URL, default https://graph.facebook.com/v21.0
}

// For returns the adapter for a provider name, or nil when there is none.
func (p Providers) For(provider string) Provider {
	switch provider {
	case "twilio":
		return &Twilio{Client: p.Platform, BaseURL: p.Twilio}
	case "meta_cloud":
		return &Meta{Client: p.Platform, BaseURL: p.Meta}
	case "kannel", "smpp":
		return &Kannel{Client: p.Client, Hosts: p.Hosts}
	}
	return nil
}

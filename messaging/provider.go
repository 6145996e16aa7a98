package messaging

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
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
type SendError struct {
	Transient  bool
	Code       string // the provider's error code, e.g. "21211", "131047"
	Message    string
	RetryAfter time.Duration
}

func (e *SendError) Error() string {
	kind := "permanent"
	if e.Transient {
		kind = "transient"
	}
	return fmt.Sprintf("provider refused (%s) %s: %s", kind, e.Code, e.Message)
}

// asSendError classifies err: a SendError as it is, anything else (network
// failure, timeout) as transient.
func asSendError(err error) *SendError {
	var se *SendError
	if errors.As(err, &se) {
		return se
	}
	return &SendError{Transient: true, Code: "network", Message: err.Error()}
}

// httpStatusError classifies a provider's HTTP status: 408, 429 and 5xx
// are worth retrying, every other 4xx will fail the same way again.
func httpStatusError(status int, code, msg string, retryAfter string) *SendError {
	e := &SendError{Code: code, Message: msg}
	if status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status >= 500 {
		e.Transient = true
	}
	if d, err := time.ParseDuration(retryAfter + "s"); err == nil && d > 0 {
		e.RetryAfter = d
	}
	return e
}

// exchange sends a provider request and reads (a bounded amount of) the
// answer; a transport failure comes back as an error, to be retried.
func exchange(client *http.Client, req *http.Request, name string) (*http.Response, []byte, error) {
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("%s send: %w", name, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if err != nil {
		return nil, nil, fmt.Errorf("%s answer: %w", name, err)
	}
	return resp, body, nil
}

// Providers builds the adapter for a channel's provider.
type Providers struct {
	Client  *http.Client
	Twilio  string // base URL, default https://api.twilio.com
	Meta    string // base URL, default https://graph.facebook.com/v21.0
	Timeout time.Duration
}

// For returns the adapter for a provider name, or nil when there is none.
func (p Providers) For(provider string) Provider {
	switch provider {
	case "twilio":
		return &Twilio{Client: p.Client, BaseURL: p.Twilio}
	case "meta_cloud":
		return &Meta{Client: p.Client, BaseURL: p.Meta}
	case "kannel", "smpp":
		return &Kannel{Client: p.Client}
	}
	return nil
}

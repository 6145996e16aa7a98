// Package captcha checks a visitor's captcha token with the provider's
// siteverify endpoint. Cloudflare Turnstile and hCaptcha (and reCAPTCHA)
// share the shape: a form POST of secret, response (the token the widget
// gave the browser) and optionally remoteip, answered with JSON
// {"success": bool, "error-codes": [...]}.
package captcha

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/switchboard/switchboard/internal/platform/egress"
)

// MaxTokenLen bounds a token (Turnstile's are at most 2048 characters).
const MaxTokenLen = 4096

// ErrRejected is a token the provider did not accept (wrong, expired,
// reused, or for another site). Codes holds the provider's error codes.
type ErrRejected struct{ Codes []string }

func (e *ErrRejected) Error() string {
	return "captcha rejected: " + strings.Join(e.Codes, ",")
}

// Verifier posts tokens to one siteverify endpoint.
type Verifier struct {
	url    string
	secret string
	client *http.Client
}

// New returns a Verifier, or nil when verifyURL or secret is empty (no
// captcha configured). client nil uses an egress client with a 5-second
// timeout.
func New(verifyURL, secret string, client *http.Client) (*Verifier, error) {
	if verifyURL == "" && secret == "" {
		return nil, nil
	}
	u, err := url.Parse(verifyURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("captcha verify URL %q: must be an http(s) URL", verifyURL)
	}
	if secret == "" {
		return nil, errors.New("captcha: a verify URL needs a secret")
	}
	if client == nil {
		// The operator's URL: any address, but no redirect (a 307 would
		// carry the secret elsewhere), a timeout and a bounded answer.
		client = egress.NewClient(egress.Options{Guard: egress.Guard{AllowAll: true}, Timeout: 5 * time.Second, MaxBody: 64 << 10})
	}
	return &Verifier{url: verifyURL, secret: secret, client: client}, nil
}

// Verify asks the provider about token from the visitor at remoteIP ("" to
// leave it out). nil means accepted; *ErrRejected means the provider said
// no; any other error means the provider could not be asked or answered
// something else.
func (v *Verifier) Verify(ctx context.Context, token, remoteIP string) error {
	if token == "" || len(token) > MaxTokenLen {
		return &ErrRejected{Codes: []string{"invalid-input-response"}}
	}
	form := url.Values{"secret": {v.secret}, "response": {token}}
	if remoteIP != "" {
		form.Set("remoteip", remoteIP)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, v.url, strings.NewReader(form.Encode()))
	if err != nil {
		return fmt.Errorf("captcha verify: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := v.client.Do(req)
	if err != nil {
		return fmt.Errorf("captcha verify: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("captcha verify: provider answered %d", res.StatusCode)
	}
	var out struct {
		Success *bool    `json:"success"`
		Codes   []string `json:"error-codes"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&out); err != nil || out.Success == nil {
		return fmt.Errorf("captcha verify: unreadable answer")
	}
	if !*out.Success {
		for _, c := range out.Codes {
			// The secret is ours: a provider that refuses it is a
			// configuration fault, not the visitor's.
			if c == "missing-input-secret" || c == "invalid-input-secret" {
				return fmt.Errorf("captcha verify: provider refused the configured secret (%s)", c)
			}
		}
		return &ErrRejected{Codes: out.Codes}
	}
	return nil
}

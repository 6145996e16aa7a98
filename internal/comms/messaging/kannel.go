package messaging

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/switchboard/switchboard/internal/platform/egress"
)

// Kannel sends through Kannel's smsbox sendsms interface
// (GET <sendsms_url>?username&password&from&to&text...). Kannel answers
// 202 "0: Accepted for delivery" (or "Sent."), 403 for bad credentials,
// 400 for a malformed request and 503 when it cannot take the message now.
// It has no message id of its own, so Switchboard's id travels in the
// dlr-url and comes back with every delivery report.
type Kannel struct {
	Client *http.Client
	// Hosts are the hosts the operator lets a sendsms_url name.
	Hosts egress.Hosts
}

// kannelDLRMask asks for every report: delivered (1), not delivered (2),
// queued at the SMSC (4), accepted by the SMSC (8), rejected by it (16).
const kannelDLRMask = 31

// Send submits one message.
func (k *Kannel) Send(ctx context.Context, m Outbound) (Sent, error) {
	cr := m.Channel.Credentials
	// Checked when the channel is written too; a channel written before
	// the operator narrowed the list fails here.
	u, err := k.Hosts.CheckURL(cr["sendsms_url"])
	if err != nil {
		return Sent{}, &SendError{Code: "provider_not_allowed", Message: "credentials.sendsms_url is not an http(s) URL on a host this installation allows", Detail: err.Error()}
	}
	q := u.Query()
	q.Set("username", cr["username"])
	q.Set("password", cr["password"])
	q.Set("from", m.Channel.Sender)
	q.Set("to", m.To)
	// Kannel converts the text from charset to the SMS coding: GSM-7 by
	// default, UCS-2 with coding=2.
	q.Set("charset", "UTF-8")
	q.Set("text", m.Body)
	if m.Encoding == UCS2 {
		q.Set("coding", "2")
	}
	if smsc := cr["smsc"]; smsc != "" {
		q.Set("smsc", smsc)
	}
	q.Set("dlr-mask", strconv.Itoa(kannelDLRMask))
	// %d is replaced by Kannel with the report type.
	q.Set("dlr-url", withParam(withParam(m.CallbackURL, "event", "dlr"), "message_id", strconv.FormatInt(m.MessageID, 10))+"&type=%d")
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Sent{}, fmt.Errorf("kannel request: %w", err)
	}
	resp, body, err := exchange(k.Client, req, "kannel sendsms")
	if err != nil {
		return Sent{}, err
	}
	text := strings.TrimSpace(string(body))
	if resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusOK {
		return Sent{ProviderID: "sb-" + strconv.FormatInt(m.MessageID, 10)}, nil
	}
	return Sent{}, httpStatusError(resp.StatusCode, 0, text, resp.Header.Get("Retry-After"))
}

// kannelDLRStatus maps a Kannel report type to a message status ("" for
// types that carry no new state).
func kannelDLRStatus(typ string) string {
	switch typ {
	case "1":
		return StatusDelivered
	case "2":
		return StatusUndelivered
	case "8":
		return StatusSent
	case "16":
		return StatusFailed
	}
	return "" // 4: buffered at the SMSC; nothing changes
}

package messaging

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Meta sends through the WhatsApp Cloud API: JSON POST to
// /{phone_number_id}/messages with a Bearer access token. Free text is
// type "text"; templates are type "template" with the template's name,
// language and a body component carrying the variables as text parameters.
// biz_opaque_callback_data carries Switchboard's message id, which Meta
// echoes in every status webhook.
type Meta struct {
	Client  *http.Client
	BaseURL string
}

type metaText struct {
	PreviewURL bool   `json:"preview_url"`
	Body       string `json:"body"`
}

type metaParam struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type metaComponent struct {
	Type       string      `json:"type"`
	Parameters []metaParam `json:"parameters"`
}

type metaTemplate struct {
	Name       string          `json:"name"`
	Language   metaLanguage    `json:"language"`
	Components []metaComponent `json:"components,omitempty"`
}

type metaLanguage struct {
	Code string `json:"code"`
}

type metaSend struct {
	MessagingProduct string        `json:"messaging_product"`
	RecipientType    string        `json:"recipient_type"`
	To               string        `json:"to"`
	Type             string        `json:"type"`
	Text             *metaText     `json:"text,omitempty"`
	Template         *metaTemplate `json:"template,omitempty"`
	BizOpaque        string        `json:"biz_opaque_callback_data,omitempty"`
}

type metaSent struct {
	Messages []struct {
		ID string `json:"id"`
	} `json:"messages"`
}

type metaError struct {
	Error struct {
		Message   string `json:"message"`
		Type      string `json:"type"`
		Code      int    `json:"code"`
		Subcode   int    `json:"error_subcode"`
		FBTraceID string `json:"fbtrace_id"`
	} `json:"error"`
}

// metaTransient are Cloud API error codes worth retrying: throttling
// (4, 80007, 130429, 131048, 131056) and temporary service trouble (1, 2, 131000, 133004).
var metaTransient = map[int]bool{1: true, 2: true, 4: true, 80007: true, 130429: true, 131000: true, 131048: true, 131056: true, 133004: true}

// Send submits one message.
func (mt *Meta) Send(ctx context.Context, m Outbound) (Sent, error) {
	cr := m.Channel.Credentials
	msg := metaSend{
		MessagingProduct: "whatsapp", RecipientType: "individual",
		To: strings.TrimPrefix(m.To, "+"), BizOpaque: "sb:" + strconv.FormatInt(m.MessageID, 10),
	}
	if m.Template != nil {
		lang := strings.ReplaceAll(m.Template.Language, "-", "_")
		if lang == "" {
			lang = "en_US"
		}
		name := m.Template.Name
		if name == "" {
			name = m.Template.ID
		}
		tpl := &metaTemplate{Name: name, Language: metaLanguage{Code: lang}}
		if len(m.Variables) > 0 {
			c := metaComponent{Type: "body"}
			for _, v := range m.Variables {
				c.Parameters = append(c.Parameters, metaParam{Type: "text", Text: v})
			}
			tpl.Components = []metaComponent{c}
		}
		msg.Type, msg.Template = "template", tpl
	} else {
		msg.Type, msg.Text = "text", &metaText{Body: m.Body}
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return Sent{}, fmt.Errorf("meta encode: %w", err)
	}
	endpoint := strings.TrimRight(mt.BaseURL, "/") + "/" + url.PathEscape(cr["phone_number_id"]) + "/messages"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return Sent{}, fmt.Errorf("meta request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+cr["access_token"])
	req.Header.Set("Content-Type", "application/json")
	resp, raw, err := exchange(mt.Client, req, "meta")
	if err != nil {
		return Sent{}, err
	}
	if resp.StatusCode == http.StatusOK {
		var out metaSent
		if err := json.Unmarshal(raw, &out); err != nil || len(out.Messages) == 0 || out.Messages[0].ID == "" {
			return Sent{}, &SendError{Transient: true, Code: "bad_response", Message: "Meta answered without a message id"}
		}
		return Sent{ProviderID: out.Messages[0].ID}, nil
	}
	var me metaError
	_ = json.Unmarshal(raw, &me)
	se := httpStatusError(resp.StatusCode, me.Error.Code, string(raw), resp.Header.Get("Retry-After"))
	if metaTransient[me.Error.Code] {
		se.Transient = true
	}
	return Sent{}, se
}

// MetaSignature computes X-Hub-Signature-256 for a webhook body.
func MetaSignature(appSecret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(appSecret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

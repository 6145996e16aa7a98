package messaging

import (
	"context"
	"crypto/hmac"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// CallbackRequest is a provider's request to
// /integration/messaging/<provider>/<channel_id>, as the HTTP layer saw it.
type CallbackRequest struct {
	Method string
	// URL is the full public URL the provider called (Switchboard's base
	// URL, path and query): Twilio signs it.
	URL    string
	Query  url.Values
	Header http.Header
	Body   []byte
}

// CallbackAnswer is what the provider gets back.
type CallbackAnswer struct {
	Status      int
	ContentType string
	Body        string
}

func answer(status int, body string) CallbackAnswer {
	return CallbackAnswer{Status: status, ContentType: "text/plain; charset=utf-8", Body: body}
}

// Callback verifies and applies a delivery report or inbound message. The
// channel must exist and use that provider; the request must carry the
// provider's proof (Kannel: the channel's callback secret; Twilio:
// X-Twilio-Signature; Meta: X-Hub-Signature-256, or the verify token in
// the subscription handshake). Unverified requests change nothing.
func (s *Service) Callback(ctx context.Context, provider string, channelID int64, r CallbackRequest) CallbackAnswer {
	ch, err := s.channels.get(ctx, channelID)
	if isNotFound(err) || (err == nil && ch.Provider != provider && !(provider == "kannel" && ch.Provider == "smpp")) {
		return answer(http.StatusNotFound, "no such channel")
	}
	if err != nil {
		s.log.Warn("messaging callback", "channel", channelID, "error", err)
		return answer(http.StatusServiceUnavailable, "try again")
	}
	var out CallbackAnswer
	switch provider {
	case "kannel":
		out = s.kannelCallback(ctx, ch, r)
	case "twilio":
		out = s.twilioCallback(ctx, ch, r)
	case "meta_cloud":
		out = s.metaCallback(ctx, ch, r)
	default:
		return answer(http.StatusNotFound, "no such provider")
	}
	if out.Status == http.StatusForbidden {
		s.log.Warn("messaging callback refused", "provider", provider, "channel", channelID, "reason", out.Body)
	}
	return out
}

func secretEqual(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// kannelCallback: delivery reports (event=dlr, from the dlr-url of each
// send) and MO messages (from an smsbox sms-service get-url/post-url).
func (s *Service) kannelCallback(ctx context.Context, ch *Channel, r CallbackRequest) CallbackAnswer {
	if !secretEqual(ch.Credentials["callback_secret"], r.Query.Get("secret")) {
		return answer(http.StatusForbidden, "bad or missing secret")
	}
	q := r.Query
	if q.Get("event") == "dlr" {
		id, err := strconv.ParseInt(q.Get("message_id"), 10, 64)
		if err != nil {
			return answer(http.StatusBadRequest, "message_id required")
		}
		if st := kannelDLRStatus(q.Get("type")); st != "" {
			code := ""
			if st == StatusFailed || st == StatusUndelivered {
				code = "kannel_dlr_" + q.Get("type")
			}
			if _, err := s.db.applyStatus(ctx, ch.Tenant, ch.ID, id, st, code, ""); err != nil {
				s.log.Warn("kannel report", "message", id, "error", err)
				return answer(http.StatusServiceUnavailable, "try again")
			}
		}
		return answer(http.StatusOK, "")
	}
	text := q.Get("text")
	if r.Method == http.MethodPost && text == "" {
		text = string(r.Body) // post-url carries the text as the body
	}
	if q.Get("from") == "" {
		return answer(http.StatusBadRequest, "from required")
	}
	if err := s.receive(ctx, ch, q.Get("from"), q.Get("to"), text, q.Get("id")); err != nil {
		return answer(http.StatusServiceUnavailable, "try again")
	}
	// An empty answer: smsbox sends no reply SMS.
	return answer(http.StatusOK, "")
}

// twilioCallback: status callbacks (MessageStatus) and incoming messages.
func (s *Service) twilioCallback(ctx context.Context, ch *Channel, r CallbackRequest) CallbackAnswer {
	if r.Method != http.MethodPost {
		return answer(http.StatusMethodNotAllowed, "POST only")
	}
	form, err := url.ParseQuery(string(r.Body))
	if err != nil {
		return answer(http.StatusBadRequest, "form body expected")
	}
	sig := r.Header.Get("X-Twilio-Signature")
	if sig == "" || !hmac.Equal([]byte(sig), []byte(TwilioSignature(ch.Credentials["auth_token"], r.URL, form))) {
		return answer(http.StatusForbidden, "bad or missing X-Twilio-Signature")
	}
	if status := form.Get("MessageStatus"); status != "" && form.Get("Body") == "" && form.Get("NumMedia") == "" {
		st := providerStatus(status)
		if st == "" {
			return answer(http.StatusNoContent, "")
		}
		id, _ := strconv.ParseInt(r.Query.Get("message_id"), 10, 64)
		if id == 0 {
			if id, err = s.db.messageByProviderID(ctx, ch.ID, form.Get("MessageSid")); err != nil {
				return answer(http.StatusNoContent, "") // not ours: nothing to apply
			}
		}
		code := form.Get("ErrorCode")
		if _, err := s.db.applyStatus(ctx, ch.Tenant, ch.ID, id, st, code, form.Get("ErrorMessage")); err != nil {
			return answer(http.StatusServiceUnavailable, "try again")
		}
		return answer(http.StatusNoContent, "")
	}
	from := strings.TrimPrefix(form.Get("From"), "whatsapp:")
	to := strings.TrimPrefix(form.Get("To"), "whatsapp:")
	if err := s.receive(ctx, ch, from, to, form.Get("Body"), form.Get("MessageSid")); err != nil {
		return answer(http.StatusServiceUnavailable, "try again")
	}
	// An empty TwiML response: no automatic reply.
	return CallbackAnswer{Status: http.StatusOK, ContentType: "text/xml", Body: `<?xml version="1.0" encoding="UTF-8"?><Response></Response>`}
}

type metaWebhook struct {
	Object string `json:"object"`
	Entry  []struct {
		Changes []struct {
			Field string `json:"field"`
			Value struct {
				Metadata struct {
					DisplayPhoneNumber string `json:"display_phone_number"`
					PhoneNumberID      string `json:"phone_number_id"`
				} `json:"metadata"`
				Messages []struct {
					From string `json:"from"`
					ID   string `json:"id"`
					Type string `json:"type"`
					Text struct {
						Body string `json:"body"`
					} `json:"text"`
				} `json:"messages"`
				Statuses []struct {
					ID          string `json:"id"`
					Status      string `json:"status"`
					RecipientID string `json:"recipient_id"`
					Opaque      string `json:"biz_opaque_callback_data"`
					Errors      []struct {
						Code  int    `json:"code"`
						Title string `json:"title"`
					} `json:"errors"`
				} `json:"statuses"`
			} `json:"value"`
		} `json:"changes"`
	} `json:"entry"`
}

// metaCallback: the subscription handshake (GET) and webhooks (POST).
func (s *Service) metaCallback(ctx context.Context, ch *Channel, r CallbackRequest) CallbackAnswer {
	if r.Method == http.MethodGet {
		q := r.Query
		if q.Get("hub.mode") != "subscribe" || !secretEqual(ch.Credentials["verify_token"], q.Get("hub.verify_token")) {
			return answer(http.StatusForbidden, "verification failed")
		}
		return answer(http.StatusOK, q.Get("hub.challenge"))
	}
	sig := r.Header.Get("X-Hub-Signature-256")
	if sig == "" || !hmac.Equal([]byte(sig), []byte(MetaSignature(ch.Credentials["app_secret"], r.Body))) {
		return answer(http.StatusForbidden, "bad or missing X-Hub-Signature-256")
	}
	var wh metaWebhook
	if err := json.Unmarshal(r.Body, &wh); err != nil {
		return answer(http.StatusBadRequest, "JSON body expected")
	}
	for _, e := range wh.Entry {
		for _, c := range e.Changes {
			if c.Field != "messages" {
				continue
			}
			if pid := c.Value.Metadata.PhoneNumberID; pid != "" && pid != ch.Credentials["phone_number_id"] {
				continue // another number's event sent to this channel's URL
			}
			for _, st := range c.Value.Statuses {
				status := providerStatus(st.Status)
				if status == "" {
					continue
				}
				id, err := strconv.ParseInt(strings.TrimPrefix(st.Opaque, "sb:"), 10, 64)
				if err != nil {
					if id, err = s.db.messageByProviderID(ctx, ch.ID, st.ID); err != nil {
						continue
					}
				}
				code, msg := "", ""
				if len(st.Errors) > 0 {
					code, msg = strconv.Itoa(st.Errors[0].Code), st.Errors[0].Title
				}
				if _, err := s.db.applyStatus(ctx, ch.Tenant, ch.ID, id, status, code, msg); err != nil {
					return answer(http.StatusServiceUnavailable, "try again")
				}
			}
			for _, m := range c.Value.Messages {
				body := m.Text.Body
				if m.Type != "text" {
					body = "[" + m.Type + "]"
				}
				if err := s.receive(ctx, ch, "+"+strings.TrimPrefix(m.From, "+"), ch.Sender, body, m.ID); err != nil {
					return answer(http.StatusServiceUnavailable, "try again")
				}
			}
		}
	}
	return answer(http.StatusOK, "")
}

// receive stores an inbound message once per provider id. Stored inbound
// messages are what opens WhatsApp's 24-hour window for free-form replies.
// When a deliverer serves the channel's inbound_destination (a chat
// channel), the message is queued in the outbox with it and the worker
// delivers it (deliverInbound).
func (s *Service) receive(ctx context.Context, ch *Channel, from, to, body, providerID string) error {
	if seen, err := s.db.seenInbound(ctx, ch.ID, providerID); err != nil || seen {
		return err
	}
	if n, err := normaliseNumber(from, ch.DefaultCountry); err == nil {
		from = n
	}
	if n, err := normaliseNumber(to, ch.DefaultCountry); err == nil {
		to = n
	}
	if to == "" {
		to = ch.Sender
	}
	m := &Message{TenantID: ch.TenantID, ChannelID: ch.ID, From: truncate(from, 32), To: truncate(to, 32), Body: body, ProviderMessageID: truncate(providerID, 128)}
	queued := s.inboundDeliverer(ch) != nil // then delivered to the destination by the worker
	if err := s.db.insertInbound(ctx, ch.Tenant, m, queued); err != nil {
		s.log.Warn("inbound message not stored", "channel", ch.ID, "error", err)
		return err
	}
	dest := "stored"
	if ch.Inbound != nil {
		dest = ch.Inbound.Type + ":" + ch.Inbound.Target
	}
	s.log.Info("message received", "channel", ch.ID, "tenant", ch.Tenant, "message", m.ID, "destination", dest)
	s.Wake()
	return nil
}

// withParam adds one query parameter to a URL string.
func withParam(u, k, v string) string {
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	return u + sep + url.QueryEscape(k) + "=" + url.QueryEscape(v)
}

package routes

import (
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/comms/messaging"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/platform/keyprefix"
)

// messagingRoutes serves sends, message status and provider callbacks.
type messagingRoutes struct {
	svc     *messaging.Service
	store   *models.Store
	baseURL string
	idem    *idempotency
}

// messagingAPIRoutes declares the messaging endpoints (routeTable). baseURL
// is the public URL providers call back on (Twilio signs it).
func messagingAPIRoutes(svc *messaging.Service, st *models.Store, rdb redis.UniversalClient, keyPrefix, baseURL string) []Route {
	r := &messagingRoutes{svc: svc, store: st, baseURL: strings.TrimRight(baseURL, "/"), idem: &idempotency{rdb: rdb, prefix: keyprefix.OrDefault(keyPrefix), ttl: 24 * time.Hour}}
	return []Route{
		{Method: "POST", Path: "/api/messaging/send", Summary: "Queue an SMS or WhatsApp message (202; sent by the outbox worker; Idempotency-Key honoured; permission messaging.send)", Tag: "messaging", Auth: AuthKeyOnly, Access: messagingSend, Request: "MessageSend", Response: "MessageQueued", Status: 202, Handler: r.idem.wrap(r.send)},
		{Method: "GET", Path: "/api/messaging/messages", Summary: "Messages sent and received, newest first; from/to (RFC 3339) bound created_at", Tag: "messaging", Auth: AuthAPI, Access: messagingList, Response: "MessageList", Query: []string{"tenant", "channel_id", "status", "direction", "from", "to", "limit", "offset"}, Handler: r.list},
		{Method: "GET", Path: "/api/messaging/messages/:id", Summary: "One message with its delivery status", Tag: "messaging", Auth: AuthAPI, Access: messagingGet, Response: "Message", Handler: r.get},
		{Method: "POST", Path: "/integration/messaging/:provider/:channel_id", Summary: "Provider callbacks: delivery reports and inbound messages (Kannel: secret in the URL; Twilio: X-Twilio-Signature; Meta: X-Hub-Signature-256)", Tag: "messaging", Auth: AuthCustom, Produces: "text/plain", Handler: r.callback},
		{Method: "GET", Path: "/integration/messaging/:provider/:channel_id", Summary: "Kannel delivery reports and MO messages (GET), Meta's webhook verification handshake (hub.challenge)", Tag: "messaging", Auth: AuthCustom, Produces: "text/plain", Handler: r.callback},
	}
}

// Access of the messaging routes. A send names a channel and a read a
// message, whose tenant only the handler can see (as with call channels);
// lists are narrowed by ?tenant=. Reads take messaging.send (a sender
// follows what it sent) or config.read, so the permission is checked in the
// handler (mayReadMessages).
var (
	messagingSend = Access{Perm: "messaging.send", Scope: ScopeCalls, User: UserOwnCalls}
	messagingList = Access{Scope: ScopeQueryTenant, User: UserOwnCalls}
	messagingGet  = Access{Scope: ScopeCalls, User: UserOwnCalls}
)

// mayReadMessages lets holders of messaging.send or config.read read messages.
func mayReadMessages(c *fiber.Ctx) error {
	if p := principal(c); !p.Can("messaging.send") && !p.Can("config.read") {
		return forbidden("this credential lacks the permission messaging.send or config.read")
	}
	return nil
}

// messagingError turns the service's refusals into API errors.
func messagingError(err error) error {
	var me *messaging.Error
	if errors.As(err, &me) {
		return newError(me.Status, me.Code, me.Msg)
	}
	return err
}

func (r *messagingRoutes) send(c *fiber.Ctx) error {
	p := principal(c)
	var in messaging.SendRequest
	if err := decodeAction(c, &in); err != nil {
		return err
	}
	m, err := r.svc.Send(c.UserContext(), p, in)
	if err != nil {
		return messagingError(err)
	}
	return c.Status(fiber.StatusAccepted).JSON(fiber.Map{
		"id": m.ID, "status": m.Status, "channel_id": m.ChannelID, "to": m.To,
		"encoding": m.Encoding, "segments": m.Segments,
	})
}

func (r *messagingRoutes) list(c *fiber.Ctx) error {
	if err := mayReadMessages(c); err != nil {
		return err
	}
	tenant := queryTenant(c)
	page, err := pageParams(c)
	if err != nil {
		return err
	}
	f := messaging.Filter{AllTenants: tenant == "", Limit: page.Limit, Offset: page.Offset}
	if tenant != "" {
		o, err := r.store.Tenant(c.UserContext(), tenant)
		if errors.Is(err, models.ErrNotFound) {
			return newError(fiber.StatusNotFound, "not_found", "no tenant "+tenant)
		}
		if err != nil {
			return err
		}
		f.TenantID = o.TenantID
	}
	verr := &models.ValidationError{Fields: map[string]string{}}
	if v := c.Query("channel_id"); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			verr.Fields["channel_id"] = "must be a positive integer"
		}
		f.ChannelID = id
	}
	if v := c.Query("status"); v != "" {
		if !slices.Contains(messaging.Statuses, v) {
			verr.Fields["status"] = "one of " + strings.Join(messaging.Statuses, ", ")
		}
		f.Status = v
	}
	if v := c.Query("direction"); v != "" {
		if v != "inbound" && v != "outbound" {
			verr.Fields["direction"] = "inbound or outbound"
		}
		f.Direction = v
	}
	for name, dst := range map[string]*time.Time{"from": &f.From, "to": &f.To} {
		if v := c.Query(name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				verr.Fields[name] = "must be an RFC 3339 time"
			}
			*dst = t
		}
	}
	if len(verr.Fields) > 0 {
		return verr
	}
	list, total, err := r.svc.Messages(c.UserContext(), f)
	if err != nil {
		return err
	}
	return sendPage(c, list, total, page)
}

func (r *messagingRoutes) get(c *fiber.Ctx) error {
	if err := mayReadMessages(c); err != nil {
		return err
	}
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil || id <= 0 {
		return models.ErrNotFound
	}
	m, err := r.svc.Message(c.UserContext(), principal(c), id)
	if err != nil {
		return err
	}
	return c.JSON(m)
}

// callback hands a provider's request to the service. It needs no API key:
// each provider proves itself (checked by the service).
func (r *messagingRoutes) callback(c *fiber.Ctx) error {
	id, err := strconv.ParseInt(c.Params("channel_id"), 10, 64)
	if err != nil || id <= 0 {
		return models.ErrNotFound
	}
	query, _ := url.ParseQuery(string(c.Request().URI().QueryString()))
	header := map[string][]string{}
	c.Request().Header.VisitAll(func(k, v []byte) {
		header[string(k)] = append(header[string(k)], string(v))
	})
	req := messaging.CallbackRequest{
		Method: c.Method(),
		URL:    r.baseURL + string(c.Request().RequestURI()),
		Query:  query,
		Header: header,
		Body:   append([]byte(nil), c.Body()...),
	}
	ans := r.svc.Callback(c.UserContext(), strings.Clone(c.Params("provider")), id, req)
	c.Set(fiber.HeaderContentType, ans.ContentType)
	return c.Status(ans.Status).SendString(ans.Body)
}

// messagingSchemas are the OpenAPI shapes of messagingAPIRoutes.
func messagingSchemas() map[string]any {
	str := obj{"type": "string"}
	num := obj{"type": "integer"}
	ts := obj{"type": "string", "format": "date-time"}
	statuses := obj{"type": "string", "enum": messaging.Statuses}
	return map[string]any{
		"MessageSend": obj{"type": "object", "required": []string{"channel_id", "to"}, "properties": obj{
			"channel_id":  obj{"type": "integer", "description": "a messaging channel the caller may use"},
			"to":          obj{"type": "string", "description": "E.164 (+27825550001), or a national number read with the channel's default_country"},
			"body":        obj{"type": "string", "description": "free text; refused on template-only channels; length and SMS segments bounded by the channel's max_body_chars"},
			"template_id": obj{"type": "string", "description": "an approved template of the channel; required on template-only channels"},
			"variables": obj{"description": "template placeholder values: exactly the template's count", "oneOf": []any{
				obj{"type": "array", "items": str}, obj{"type": "object", "additionalProperties": str},
			}},
			"contact_id": obj{"type": "integer", "description": "a contact of the same tenant; its opt-out flags are honoured"},
		}},
		"MessageQueued": obj{"type": "object", "properties": obj{
			"id": num, "status": obj{"type": "string", "enum": []string{"queued"}}, "channel_id": num, "to": str,
			"encoding": obj{"type": "string", "enum": []string{"gsm7", "ucs2", ""}}, "segments": num,
		}},
		"Message": obj{"type": "object", "properties": obj{
			"id": num, "tenant": str, "channel_id": num, "direction": obj{"type": "string", "enum": []string{"outbound", "inbound"}},
			"to": str, "from": str, "body": str, "template_id": str, "variables": obj{"type": "array", "items": str},
			"contact_id": num, "encoding": str, "segments": num, "status": statuses,
			"provider_message_id": str, "error_code": str, "error_message": str, "attempts": num,
			"created_at": ts, "updated_at": ts, "sent_at": ts, "delivered_at": ts,
		}},
		"MessageList": obj{"type": "array", "items": obj{"$ref": "#/components/schemas/Message"}},
	}
}

package routes

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/comms/webhooks"
	"github.com/switchboard/switchboard/internal/models"
)

// Outbound webhooks beyond CRUD (resources.md §3.5): the delivery log, a
// replay, a test send and re-enabling, for tenant, platform and system
// webhooks alike.

type deliveryRoutes struct {
	store *models.Store
	svc   *webhooks.Service
}

// webhookKind is one kind of webhook's delivery routes: their base path
// and access (the delivery log pages declare the same, manage_tools.go).
type webhookKind struct {
	kind, base  string
	read, write Access
}

var webhookKinds = []webhookKind{
	{webhooks.KindTenant, "/api/tenants/:tenant/outbound_webhooks/:id", Access{Perm: "config.read", Scope: ScopeTenant}, Access{Perm: "config.write", Scope: ScopeTenant}},
	{webhooks.KindPlatform, "/api/webhooks/:id", Access{Perm: "config.read", Scope: ScopePlatform}, Access{Perm: "config.write", Scope: ScopePlatform}},
	{webhooks.KindSystem, "/api/system_webhooks/:id", Access{Perm: "config.read", Scope: ScopePlatform}, Access{Perm: "config.write", Scope: ScopePlatform}},
}

// webhookDeliveryRoutes declares the delivery routes of every webhook kind.
func webhookDeliveryRoutes(st *models.Store, svc *webhooks.Service) []Route {
	r := &deliveryRoutes{store: st, svc: svc}
	var out []Route
	for _, k := range webhookKinds {
		out = append(out,
			Route{Method: "GET", Path: k.base + "/deliveries", Summary: "The webhook's deliveries, newest first: status, attempts, last answer (status, latency, error, first KiB of the body) and each attempt's (attempt_history)", Tag: k.kind, Auth: AuthAPI, Access: k.read, Response: "WebhookDeliveryList", Query: []string{"limit", "offset"}, Handler: r.list(k.kind)},
			Route{Method: "POST", Path: k.base + "/deliveries/:delivery_id/replay", Summary: "Send a delivery again (same event id and body, attempts counted afresh); 202, attempted by the worker", Tag: k.kind, Auth: AuthAPI, Access: k.write, Request: "Empty", Response: "WebhookDelivery", Status: 202, Handler: r.replay(k.kind)},
			Route{Method: "POST", Path: k.base + "/test", Summary: "Send a webhook.test event now (enabled or not) and answer the attempt; not counted as a failure", Tag: k.kind, Auth: AuthAPI, Access: k.write, Request: "Empty", Response: "WebhookDelivery", Handler: r.test(k.kind)},
			Route{Method: "POST", Path: k.base + "/enable", Summary: "Enable the webhook again: clears disabled_reason and the failure count; held deliveries resume", Tag: k.kind, Auth: AuthAPI, Access: k.write, Request: "Empty", Response: resourceSchemaName(k.kind), Handler: r.enable(k.kind)},
		)
	}
	return out
}

// hook finds the path's webhook in the caller's scope (404 otherwise).
func (r *deliveryRoutes) hook(c *fiber.Ctx, kind string) (models.Owner, int64, error) {
	o := tenantOwner(c)
	if _, err := r.store.Get(c.UserContext(), r.store.Registry().Resource(kind), o, c.Params("id")); err != nil {
		return o, 0, err
	}
	id, _ := strconv.ParseInt(c.Params("id"), 10, 64)
	return o, id, nil
}

func (r *deliveryRoutes) list(kind string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		_, id, err := r.hook(c, kind)
		if err != nil {
			return err
		}
		page, err := pageParams(c)
		if err != nil {
			return err
		}
		ds, total, err := r.svc.Deliveries(c.UserContext(), kind, id, page)
		if err != nil {
			return err
		}
		return sendPage(c, ds, total, page)
	}
}

func (r *deliveryRoutes) replay(kind string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		_, id, err := r.hook(c, kind)
		if err != nil {
			return err
		}
		d, err := r.svc.Replay(c.UserContext(), kind, id, c.Params("delivery_id"))
		if err != nil {
			return err
		}
		return c.Status(fiber.StatusAccepted).JSON(d)
	}
}

func (r *deliveryRoutes) test(kind string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		o, id, err := r.hook(c, kind)
		if err != nil {
			return err
		}
		d, err := r.svc.Test(c.UserContext(), kind, o.Tenant, id)
		if err != nil {
			return err
		}
		return c.JSON(d)
	}
}

func (r *deliveryRoutes) enable(kind string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		o, id, err := r.hook(c, kind)
		if err != nil {
			return err
		}
		if err := r.svc.Enable(c.UserContext(), kind, o, id); err != nil {
			return err
		}
		rec, err := r.store.Get(c.UserContext(), r.store.Registry().Resource(kind), o, c.Params("id"))
		if err != nil {
			return err
		}
		return c.JSON(rec)
	}
}

// webhookDeliverySchemas are the OpenAPI shapes of webhookDeliveryRoutes.
func webhookDeliverySchemas() map[string]any {
	str := obj{"type": "string"}
	return map[string]any{
		"WebhookDelivery": obj{"type": "object", "required": []string{"id", "webhook_id", "event_id", "event_type", "status", "attempts", "attempt_history"}, "properties": obj{
			"id":              obj{"type": "integer", "description": "the delivery id (replay names it)"},
			"webhook_id":      obj{"type": "integer"},
			"event_id":        obj{"type": "string", "description": "sent as X-Webhook-Id; the same on every attempt and replay"},
			"event_type":      str,
			"status":          obj{"type": "string", "enum": []string{webhooks.StatusPending, webhooks.StatusSucceeded, webhooks.StatusDead, webhooks.StatusHeld}, "description": "held: the webhook is disabled; dead: out of attempts or the webhook is gone"},
			"attempts":        obj{"type": "integer"},
			"next_attempt_at": obj{"type": "string", "description": "pending deliveries: when the next attempt is due"},
			"last_attempt_at": obj{"type": []string{"string", "null"}},
			"response_status": obj{"type": "integer", "description": "HTTP status of the last answer (0: no answer)"},
			"latency_ms":      obj{"type": "integer"},
			"error":           obj{"type": "string", "description": "why the last attempt failed (refused target, timeout, HTTP status)"},
			"response_body":   obj{"type": "string", "description": "the last answer's first KiB"},
			"created_at":      str,
			"updated_at":      str,
			"attempt_history": obj{"type": "array", "description": "the delivery's attempts, oldest first (the last 20; a replay starts counting again at 1)", "items": obj{"$ref": "#/components/schemas/WebhookAttempt"}},
		}},
		"WebhookAttempt": obj{"type": "object", "required": []string{"attempt", "at", "response_status", "latency_ms", "error", "response_body"}, "properties": obj{
			"attempt":         obj{"type": "integer", "description": "1 for the first attempt"},
			"at":              obj{"type": "string", "description": "when the attempt ended"},
			"response_status": obj{"type": "integer", "description": "HTTP status of the answer (0: no answer)"},
			"latency_ms":      obj{"type": "integer"},
			"error":           obj{"type": "string", "description": "why it failed (empty on success)"},
			"response_body":   obj{"type": "string", "description": "the answer's first KiB"},
		}},
		"WebhookDeliveryList": obj{"type": "array", "items": obj{"$ref": "#/components/schemas/WebhookDelivery"}},
	}
}

// resourceSchemaName is the read schema of the registry resource called name.
func resourceSchemaName(name string) string {
	for _, res := range models.Resources {
		if res.Name == name {
			return schemaNames(res).Read
		}
	}
	panic("routes: no resource " + name)
}

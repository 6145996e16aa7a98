package routes

import (
	"errors"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/freeswitch/fsxml"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/platform/metrics"
)

// xmlRoutes serves FreeSWITCH's mod_xml_curl and the routing trace.
type xmlRoutes struct {
	svc     *fsxml.Service
	metrics *metrics.Metrics
}

// xmlCurlRoutes declares POST /fs/xml (authenticated by the handler itself:
// Basic credentials and/or the source allow list) and the two routing-trace
// endpoints.
func xmlCurlRoutes(st *models.Store, svc *fsxml.Service, m *metrics.Metrics) []Route {
	x := &xmlRoutes{svc: svc, metrics: m}
	return []Route{
		{Method: "POST", Path: "/fs/xml", Summary: "FreeSWITCH mod_xml_curl fetch (directory, dialplan, configuration)", Tag: "freeswitch", Auth: AuthCustom, Consumes: "application/x-www-form-urlencoded", Request: "FreeSWITCHFetch", Produces: "text/xml", Handler: x.fetch},
		{Method: "GET", Path: "/api/tenants/:tenant/routing/trace", Summary: "Explain where a call from an extension or number to a dialled number goes, with the dialplan XML", Tag: "routing", Auth: AuthAPI, Access: traceTenantAccess, Response: "RoutingTrace", Query: traceTenantQuery, Handler: x.traceTenant},
		{Method: "GET", Path: "/api/routing/trace", Summary: "Explain where a call to a DID goes, with the public-context XML", Tag: "routing", Auth: AuthAPI, Access: tracePlatformAccess, Response: "RoutingTrace", Query: tracePlatformQuery, Handler: x.tracePublic},
	}
}

// The routing traces' access and query, which the trace pages
// (manage_tools.go) declare too.
var (
	traceTenantAccess   = Access{Perm: "config.read", Scope: ScopeTenant}
	tracePlatformAccess = Access{Perm: "config.read", Scope: ScopePlatform}
	traceTenantQuery    = []string{"from", "to", "at"}
	tracePlatformQuery  = []string{"did", "from", "at"}
)

// xmlCurlSchemas are the OpenAPI shapes of xmlCurlRoutes.
func xmlCurlSchemas() map[string]any {
	str := obj{"type": "string"}
	return map[string]any{
		"FreeSWITCHFetch": obj{"type": "object", "description": "the form mod_xml_curl posts; a request Switchboard does not serve answers FreeSWITCH's not-found document",
			"properties":           obj{"section": str, "tag_name": str, "key_name": str, "key_value": str, "hostname": str},
			"additionalProperties": str},
		"RoutingTrace": obj{"type": "object", "properties": obj{
			"context": obj{"type": "string"},
			"trace":   obj{"type": "object", "description": "route, condition, schedule and destination that decided the call"},
			"xml":     obj{"type": "string", "description": "the exact document FreeSWITCH would receive"},
		}},
	}
}

func (x *xmlRoutes) fetch(c *fiber.Ctx) error {
	if err := x.svc.Authorize(c.Context().RemoteIP(), c.Get(fiber.HeaderAuthorization)); err != nil {
		if errors.Is(err, fsxml.ErrUnauthorized) {
			c.Locals(basicChallengeKey, true)
			return newError(fiber.StatusUnauthorized, "unauthorized", "FreeSWITCH XML needs valid credentials")
		}
		return newError(fiber.StatusForbidden, "forbidden", "this address may not fetch FreeSWITCH XML")
	}
	var rec fsxml.FetchRecord
	start := time.Now()
	doc, err := x.svc.Fetch(fsxml.WithFetchRecorder(c.UserContext(), &rec), c.Body())
	x.metrics.ObserveXMLFetch(rec.Section, rec.Tier, time.Since(start))
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "text/xml; charset=utf-8")
	return c.Send(doc)
}

// traceTime reads ?at= (RFC 3339), default now.
func traceTime(c *fiber.Ctx) (time.Time, error) {
	v := c.Query("at")
	if v == "" {
		return time.Now(), nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return t, models.FieldError("at", "must be an RFC 3339 time")
	}
	return t, nil
}

func (x *xmlRoutes) traceTenant(c *fiber.Ctx) error {
	o := tenantOwner(c)
	to := strings.Clone(c.Query("to"))
	if to == "" {
		return models.FieldError("to", "the dialled number is required")
	}
	at, err := traceTime(c)
	if err != nil {
		return err
	}
	res, err := x.svc.TraceTenant(c.UserContext(), o.Tenant, strings.Clone(c.Query("from")), to, at)
	if err != nil {
		return err
	}
	return c.JSON(res)
}

func (x *xmlRoutes) tracePublic(c *fiber.Ctx) error {
	did := strings.Clone(c.Query("did"))
	if did == "" {
		return models.FieldError("did", "the DID is required")
	}
	at, err := traceTime(c)
	if err != nil {
		return err
	}
	res, err := x.svc.TracePublic(c.UserContext(), did, strings.Clone(c.Query("from")), at)
	if err != nil {
		return err
	}
	return c.JSON(res)
}

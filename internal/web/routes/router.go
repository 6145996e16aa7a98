// Package routes is Switchboard's HTTP surface: the Fiber app, its
// middleware (request id, auth, tenant scope, errors, limits) and handlers,
// a file per area. routeTable (table.go) lists every route in order, group
// by group; that list both registers them and feeds the OpenAPI document.
package routes

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"
	"github.com/valyala/fasthttp"

	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/platform/keyprefix"
	"github.com/switchboard/switchboard/internal/platform/metrics"
	"github.com/switchboard/switchboard/internal/web/websession"
)

// Deps is what the HTTP layer needs from the wiring in app.
type Deps struct {
	Store *models.Store
	Redis redis.UniversalClient
	// KeyPrefix starts every Redis key (models.Store.KeyPrefix; "" means
	// "sb:").
	KeyPrefix string
	Logger    *slog.Logger
	BaseURL   string
	// BodyLimit caps request bodies (413 beyond it).
	BodyLimit int
	// XMLAccessLog says which /fs/xml fetches are logged (the zero value:
	// errors and refused credentials only).
	XMLAccessLog XMLAccessLog
	// Services are the parts app wires (FreeSWITCH XML, media, fax,
	// messaging, chat, live calls, outbound webhooks); routeTable
	// (table.go) serves the routes of each one set.
	Services Services
	// Extra are routes beyond the table, registered after its groups (the
	// benchmark's reference route); their shapes are not documented.
	Extra []Route
	// Ready adds readiness checks beyond the database and Redis.
	Ready map[string]func(ctx context.Context) error
	// Draining, when set and true, takes the replica out: every readiness
	// answers 503 "draining" while the process finishes what it serves
	// (the first step of a graceful shutdown).
	Draining func() bool
	// XMLServable reports whether the XML path can answer from memory
	// (models held) when the database does not answer.
	XMLServable func() bool
	// Limits are the per-credential and failed-authentication rate limits.
	Limits Limits
	// Metrics counts every request; served at /metrics to platform
	// principals unless MetricsElsewhere (its own listener serves it).
	Metrics          *metrics.Metrics
	MetricsElsewhere bool
	// Sessions keeps administrators' browser sessions; nil: sessions in
	// Redis with the default expiry (websession.New).
	Sessions *websession.Store
	// SIPDomain is the installation's SIP domain: where provisioned phones
	// register.
	SIPDomain string
	// OutboxDepth, when set, reports how many committed changes some
	// subscriber has not handled yet; /readyz shows it.
	OutboxDepth func(ctx context.Context) (int64, error)
}

// Auth says how a route authenticates.
type Auth int

// Authentication modes.
const (
	AuthNone    Auth = iota // public (health, docs)
	AuthAPI                 // X-API-Key or HTTP Basic
	AuthKeyOnly             // X-API-Key (action endpoints)
	AuthCustom              // the handler authenticates (FreeSWITCH XML, webhooks)
	// AuthPage is a server-rendered page for a signed-in administrator:
	// the session cookie (without a live session, 303 to /login?next=…);
	// unsafe methods need the session's CSRF token (csrf_token form field
	// or X-CSRF-Token). Access is declared and enforced as for AuthAPI.
	AuthPage
	// AuthSession is JSON for the browser session only (GET /session):
	// the session cookie, 401 without one.
	AuthSession
	// AuthKeyOrSession is an action endpoint the live-calls dashboard
	// uses: an API key, or the browser session with its CSRF token; never
	// HTTP Basic.
	AuthKeyOrSession
)

// Route declares one endpoint for registration and for the OpenAPI document.
type Route struct {
	Method, Path string // Fiber path (:param)
	Summary      string
	Tag          string
	Auth         Auth
	// Access declares the permission, scope and user-key rule authorize
	// enforces; every route with Auth API or KeyOnly must declare a scope.
	Access Access
	// Resource and Op describe generated CRUD routes.
	Resource *models.Resource
	Op       string // list, get, create, update, delete
	// Request and Response name schemas in the OpenAPI document
	// (components/schemas) for hand-written routes.
	Request, Response string
	Status            int
	Query             []string // documented query parameters
	Produces          string   // content type(s) when not JSON, comma-separated
	// SlackAnswers marks a Slack-compatible endpoint: its refusals are
	// Slack's plain-text codes (the Error shape when asked for JSON), and
	// a form body carries the request as JSON in its payload field.
	SlackAnswers bool
	Consumes     string // request content type when not JSON
	// Wildcard names a trailing * path parameter in the document.
	Wildcard string
	// Answers documents other answers than Status: status → schema name.
	Answers map[int]string
	// HTMLAnswers are statuses a page answers with HTML (the form again,
	// with the reason) besides the Error shape.
	HTMLAnswers []int
	// Idempotent routes honour an Idempotency-Key header (calls_idem.go).
	Idempotent bool
	// Ranges routes answer Range requests with 206 (file downloads).
	Ranges bool
	// BodyLimit, when set, lets this route take bodies up to that size
	// instead of Deps.BodyLimit (audio uploads, bulk imports).
	BodyLimit int
	// OwnBody routes read and refuse their body themselves, in their own
	// answer shape (the Slack-compatible webhook's plain-text codes);
	// every other route with a JSON request passes jsonBody first.
	OwnBody bool
	Handler fiber.Handler
}

// requestSchema names a route's request body schema ("" when it takes none).
func requestSchema(r Route) string {
	if r.Resource != nil {
		n := schemaNames(r.Resource)
		switch r.Op {
		case "create":
			return n.Create
		case "update":
			return n.Update
		}
		return ""
	}
	return r.Request
}

type server struct {
	Deps
	auth *authenticator
}

// New builds the Fiber app with every route.
func New(d Deps) *fiber.App {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.BodyLimit == 0 {
		d.BodyLimit = 1 << 20
	}
	d.KeyPrefix = keyprefix.OrDefault(d.KeyPrefix)
	if d.Sessions == nil {
		d.Sessions = websession.New(d.Redis, d.KeyPrefix, DefaultSessionIdle, DefaultSessionMax)
	}
	s := &server{Deps: d, auth: &authenticator{store: d.Store, basic: newBasicCache(d.Metrics), limit: newLimiter(d.Redis, d.KeyPrefix, d.Limits), sessions: d.Sessions,
		failures: &loginFailures{store: d.Store, rdb: d.Redis, prefix: d.KeyPrefix, log: d.Logger},
		totp:     &totpSteps{rdb: d.Redis, prefix: d.KeyPrefix}}}
	var doc *openAPIDoc
	routes, schemas := s.routeTable(&doc)
	app := fiber.New(fiber.Config{
		AppName:               "switchboard",
		BodyLimit:             d.BodyLimit,
		ErrorHandler:          errorHandler,
		DisableStartupMessage: true,
		// Bodies are JSON (browserGuard); multipart is never parsed.
		DisablePreParseMultipartForm: true,
		ReadTimeout:                  30 * time.Second,
		IdleTimeout:                  120 * time.Second,
		// FreeSWITCH's dialplan fetch is a ~6.5 KB form: with fasthttp's
		// 4 KB default every call's request took two reads.
		ReadBufferSize: 16 << 10,
		// And its answers are 2-8 KB: with the 4 KB default write buffer
		// each took two writes (the buffer filled and flushed, then the
		// rest), one system call more per call than a small answer.
		WriteBufferSize: 16 << 10,
	})
	app.Server().HeaderReceived = routeBodyLimits(routes, app.Config())
	app.Use(requestContext(d.Logger, d.Metrics, 30*time.Second, d.XMLAccessLog), securityHeaders)
	forms := formGuard(d.BaseURL)
	for _, r := range routes {
		handlers := []fiber.Handler{}
		if r.Method == fiber.MethodGet && len(r.HTMLAnswers) > 0 {
			handlers = append(handlers, htmlErrors(r.HTMLAnswers))
		}
		switch {
		case guarded(r):
			handlers = append(handlers, browserGuard(d.BaseURL, r))
		case browserForm(r):
			handlers = append(handlers, forms)
		}
		switch r.Auth {
		case AuthAPI:
			handlers = append(handlers, s.auth.middleware(true), s.authorize(r))
		case AuthKeyOnly:
			handlers = append(handlers, s.auth.middleware(false), s.authorize(r))
		case AuthPage:
			handlers = append(handlers, s.auth.pageAuth(), s.authorize(r))
		case AuthSession:
			handlers = append(handlers, s.auth.sessionOnly(), s.authorize(r))
		case AuthKeyOrSession:
			handlers = append(handlers, s.auth.keyOrSession(), s.authorize(r))
		}
		if r.Auth != AuthNone && r.Auth != AuthCustom && r.Access.Scope == scopeUndeclared {
			panic(fmt.Sprintf("route %s %s declares no access scope", r.Method, r.Path)) // a programming error caught at start
		}
		if takesJSON(r) {
			handlers = append(handlers, jsonBody(r))
		}
		app.Add(r.Method, r.Path, append(handlers, r.Handler)...)
	}
	doc = openAPIDocument(routes, models.Resources, d.BaseURL, schemas)
	app.Use(func(c *fiber.Ctx) error {
		c.Locals(unmatchedKey, true)
		if allowed := allowedMethods(routes, c.Path(), app.Config()); len(allowed) > 0 {
			c.Set(fiber.HeaderAllow, strings.Join(allowed, ", "))
			return newError(fiber.StatusMethodNotAllowed, "method_not_allowed",
				c.Method()+" is not allowed on "+c.Path()+"; allowed: "+strings.Join(allowed, ", "))
		}
		return newError(fiber.StatusNotFound, "not_found", "no route for "+c.Method()+" "+c.Path())
	})
	return app
}

// docRoutes serve the OpenAPI document, built once the route table is
// registered (New).
func docRoutes(doc **openAPIDoc) []Route {
	return []Route{
		{Method: "GET", Path: "/api/openapi.json", Summary: "This OpenAPI 3.1 document", Tag: "operations", Produces: "application/json", Handler: func(c *fiber.Ctx) error {
			c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
			return c.Send((*doc).json())
		}},
		{Method: "GET", Path: "/api/openapi.yaml", Summary: "This OpenAPI 3.1 document as YAML", Tag: "operations", Produces: "application/yaml", Handler: func(c *fiber.Ctx) error {
			c.Set(fiber.HeaderContentType, "application/yaml")
			return c.Send((*doc).yaml())
		}},
	}
}

// routeBodyLimits lets the routes that declare a BodyLimit (audio uploads,
// bulk imports) take bodies up to it, while every other request keeps the
// server's default. It runs when a request's header has arrived, so a body
// announced over its route's limit is refused with 413 before a byte of it
// is read, and one route's large limit never lets big bodies into the rest.
func routeBodyLimits(routes []Route, cfg fiber.Config) func(*fasthttp.RequestHeader) fasthttp.RequestConfig {
	// This runs for every request, /fs/xml included, before its body is
	// read: a route's literal prefix rules it out without parsing its pattern.
	type largeRoute struct {
		Route
		prefix []byte // the path up to its first parameter
	}
	var large []largeRoute
	for _, r := range routes {
		if r.BodyLimit > cfg.BodyLimit {
			end := strings.IndexAny(r.Path, ":*+?(")
			if end < 0 {
				end = len(r.Path)
			}
			large = append(large, largeRoute{Route: r, prefix: []byte(r.Path[:end])})
		}
	}
	hasPrefix := func(uri, prefix []byte) bool {
		if len(uri) < len(prefix) {
			return false
		}
		if cfg.CaseSensitive {
			return bytes.Equal(uri[:len(prefix)], prefix)
		}
		return bytes.EqualFold(uri[:len(prefix)], prefix)
	}
	return func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
		uri := h.RequestURI()
		for _, r := range large {
			if string(h.Method()) != r.Method || !hasPrefix(uri, r.prefix) {
				continue
			}
			path, _, _ := strings.Cut(string(uri), "?")
			if fiber.RoutePatternMatch(path, r.Path, cfg) {
				return fasthttp.RequestConfig{MaxRequestBodySize: r.BodyLimit}
			}
		}
		return fasthttp.RequestConfig{}
	}
}

// allowedMethods lists the methods declared for a path that no route took
// with the request's method (the 405 answer's Allow header).
func allowedMethods(routes []Route, path string, cfg fiber.Config) []string {
	if !cfg.StrictRouting && len(path) > 1 {
		path = strings.TrimSuffix(path, "/") // the router takes "/x/" for "/x" too
	}
	seen := map[string]bool{}
	var out []string
	for _, r := range routes {
		if !seen[r.Method] && fiber.RoutePatternMatch(path, r.Path, cfg) {
			seen[r.Method] = true
			out = append(out, r.Method)
		}
	}
	slices.Sort(out)
	return out
}

// resourcePath is where a resource's collection lives.
func resourcePath(res *models.Resource) string {
	if res.Scope == models.TenantScope {
		return "/api/tenants/:tenant/" + res.Name
	}
	return "/api/" + res.Name
}

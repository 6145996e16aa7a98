package routes

import (
	"net/http"
	"net/http/pprof"
	rpprof "runtime/pprof"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
)

// opsRoutes serves /metrics (unless it has its own listener) and pprof,
// both to platform principals only: profiles and metrics reveal tenants'
// traffic and the process's internals.
func (s *server) opsRoutes() []Route {
	var rs []Route
	if s.Metrics != nil && !s.MetricsElsewhere {
		rs = append(rs, Route{Method: "GET", Path: "/metrics", Summary: "Prometheus metrics (platform credentials; or on SWITCHBOARD_METRICS_LISTEN without them)",
			Tag: "operations", Auth: AuthAPI, Access: platformAccess, Produces: "text/plain", Handler: adaptor.HTTPHandler(s.Metrics.Handler())})
	}
	const binary, text = "application/octet-stream", "text/plain"
	profiles := []struct{ path, summary, produces string }{
		{"/debug/pprof/", "pprof index (platform credentials)", "text/html"},
		{"/debug/pprof/cmdline", "pprof: the command line", text},
		{"/debug/pprof/profile", "pprof: CPU profile (?seconds=N, default 30)", binary},
		{"/debug/pprof/symbol", "pprof: symbol lookup", text},
		{"/debug/pprof/trace", "pprof: execution trace (?seconds=N)", binary},
		{"/debug/pprof/:profile", "pprof: a named profile (heap, goroutine, allocs, block, mutex, threadcreate; text with ?debug=1)", binary + ", " + text},
	}
	handlers := map[string]http.HandlerFunc{
		"/debug/pprof/":        pprof.Index,
		"/debug/pprof/cmdline": pprof.Cmdline,
		"/debug/pprof/profile": pprof.Profile,
		"/debug/pprof/symbol":  pprof.Symbol,
		"/debug/pprof/trace":   pprof.Trace,
		// Index serves named profiles from the path's last element.
		"/debug/pprof/:profile": pprof.Index,
	}
	for _, p := range profiles {
		h := adaptor.HTTPHandlerFunc(handlers[p.path])
		if p.path == "/debug/pprof/:profile" {
			h = knownProfile(h)
		}
		rs = append(rs, Route{Method: "GET", Path: p.path, Summary: p.summary, Tag: "operations", Auth: AuthAPI, Access: platformAccess,
			Produces: p.produces, Handler: h})
	}
	return rs
}

// knownProfile answers an unknown profile name with the API's 404 error
// rather than net/http/pprof's plain-text one.
func knownProfile(next fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if rpprof.Lookup(c.Params("profile")) == nil {
			return newError(fiber.StatusNotFound, "not_found", "no profile named "+c.Params("profile"))
		}
		return next(c)
	}
}

// platformAccess: metrics and profiles reveal every tenant's traffic and
// the process's internals.
var platformAccess = Access{Scope: ScopePlatform}

package routes

import (
	"net/http"
	"net/http/pprof"

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
	profiles := []struct{ path, summary string }{
		{"/debug/pprof/", "pprof index (platform credentials)"},
		{"/debug/pprof/cmdline", "pprof: the command line"},
		{"/debug/pprof/profile", "pprof: CPU profile (?seconds=N, default 30)"},
		{"/debug/pprof/symbol", "pprof: symbol lookup"},
		{"/debug/pprof/trace", "pprof: execution trace (?seconds=N)"},
		{"/debug/pprof/:profile", "pprof: a named profile (heap, goroutine, allocs, block, mutex, threadcreate)"},
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
		rs = append(rs, Route{Method: "GET", Path: p.path, Summary: p.summary, Tag: "operations", Auth: AuthAPI, Access: platformAccess,
			Produces: "application/octet-stream", Handler: adaptor.HTTPHandlerFunc(handlers[p.path])})
	}
	return rs
}

// platformAccess: metrics and profiles reveal every tenant's traffic and
// the process's internals.
var platformAccess = Access{Scope: ScopePlatform}

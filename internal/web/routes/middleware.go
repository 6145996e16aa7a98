package routes

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"math"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/platform/metrics"
)

type ctxKey int

// requestKey holds the request's *requestInfo in c.UserContext().
const requestKey ctxKey = 0

// requestInfo is what the context carries about a request: the id and
// the server's logger. The logger with the id attached is made only when
// a handler asks for it (logger): slog's With formats the attribute into
// a new handler, an allocation per request that /fs/xml at 30,000 fetches
// a second, which mostly log nothing, does not need.
type requestInfo struct {
	id   string
	base *slog.Logger
	log  atomic.Pointer[slog.Logger] // base with the id, made on first use
}

// logger may be called from goroutines a handler starts.
func (r *requestInfo) logger() *slog.Logger {
	if l := r.log.Load(); l != nil {
		return l
	}
	r.log.CompareAndSwap(nil, r.base.With("request_id", r.id))
	return r.log.Load()
}

// Locals keys.
const (
	principalKey      = "principal"
	basicChallengeKey = "basic_challenge"
	unmatchedKey      = "unmatched" // set by the no-route handler
)

// requestContext is the first middleware: it gives the request an id
// (echoing a sane X-Request-ID), a deadline and a logger carrying the id,
// all in c.UserContext(), which Fiber otherwise leaves as Background.
func requestContext(base *slog.Logger, m *metrics.Metrics, timeout time.Duration, xmlAccess XMLAccessLog) fiber.Handler {
	xmlLog := newXMLLogger(xmlAccess)
	return func(c *fiber.Ctx) error {
		id := c.Get(fiber.HeaderXRequestID)
		if !validRequestID(id) {
			id = newRequestID()
		}
		c.Set(fiber.HeaderXRequestID, id)
		info := &requestInfo{id: id, base: base}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		ctx = context.WithValue(ctx, requestKey, info)
		c.SetUserContext(ctx)
		start := time.Now()
		err := c.Next()
		if err != nil {
			if herr := c.App().ErrorHandler(c, err); herr != nil {
				return herr
			}
		}
		status, route, latency := c.Response().StatusCode(), routePattern(c), time.Since(start)
		// Fiber's strings alias its reused buffers: the metric keeps a copy.
		m.ObserveHTTP(strings.Clone(c.Method()), route, status, latency)
		who := "-"
		if p := principal(c); p != nil {
			who = p.Name // "key:<prefix>" or "admin:<user>": never a secret
		}
		level, logged := levelFor(route, status), true
		if route == xmlRoute {
			level, logged = xmlLog.level(status, latency)
		}
		if !logged || !base.Enabled(ctx, level) {
			return nil
		}
		info.logger().LogAttrs(ctx, level, "http request",
			slog.Int("status", status),
			slog.Float64("latency_ms", float64(latency.Microseconds())/1000),
			slog.String("method", c.Method()),
			slog.String("route", route),
			slog.String("path", redactPath(c.Path())),
			slog.String("principal", who),
			slog.String("remote", c.IP()),
		)
		return nil
	}
}

// routePattern is the matched route's declared path (":tenant", not the
// tenant's name), so logs and metrics group by endpoint; "unmatched" when
// no route took the request.
func routePattern(c *fiber.Ctx) string {
	if unmatched, _ := c.Locals(unmatchedKey).(bool); unmatched {
		return "unmatched"
	}
	if r := c.Route(); r != nil && r.Path != "" {
		return r.Path
	}
	return "unmatched"
}

// probeRoutes are polled every few seconds by load balancers and
// Prometheus; their lines stay at debug so the info log is about traffic.
var probeRoutes = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// levelFor logs every request at info (401 and 403 included), probes at
// debug, and server errors at error.
func levelFor(route string, status int) slog.Level {
	switch {
	case status >= 500:
		return slog.LevelError
	case probeRoutes[route]:
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// xmlRoute is FreeSWITCH's fetch: tens of thousands a second at peak,
// counted in metrics, logged only as XMLAccessLog says.
const xmlRoute = "/fs/xml"

// XMLAccessLog says which /fs/xml fetches get a log line. Every fetch is
// counted in the metrics (switchboard_http_requests_total and the latency
// histogram); a line per fetch at 30,000 a second would be gigabytes an
// hour and a tenth of the throughput, so by default only what needs a
// person is logged: server errors (error), refusals of FreeSWITCH's
// credentials (info) and fetches slower than Slow (warn).
type XMLAccessLog struct {
	// Sample is the share of the other fetches logged at info, 0 to 1
	// (SWITCHBOARD_XML_ACCESS_LOG; 0 = none, 1 = every fetch).
	Sample float64
	// Slow is the answer time past which a fetch is logged at warn
	// (SWITCHBOARD_XML_SLOW_FETCH; 0 = never).
	Slow time.Duration
}

// xmlLogger decides per fetch; it counts the fetches so the sample is
// every n-th one (n = 1/Sample, rounded): exactly the share asked for,
// with no random draw on the hot path.
type xmlLogger struct {
	XMLAccessLog
	every uint64 // 0: no sample
	n     atomic.Uint64
}

func newXMLLogger(x XMLAccessLog) *xmlLogger {
	l := &xmlLogger{XMLAccessLog: x}
	if x.Sample > 0 {
		l.every = uint64(math.Max(1, math.Round(1/x.Sample)))
	}
	return l
}

func (x *xmlLogger) level(status int, latency time.Duration) (slog.Level, bool) {
	switch {
	case status >= 500:
		return slog.LevelError, true
	case x.Slow > 0 && latency >= x.Slow:
		return slog.LevelWarn, true
	case status == fiber.StatusUnauthorized || status == fiber.StatusForbidden:
		return slog.LevelInfo, true
	case x.every > 0 && x.n.Add(1)%x.every == 0:
		return slog.LevelInfo, true
	}
	return 0, false
}

// redactPath keeps webhook tokens out of logs.
func redactPath(p string) string {
	const hook = "/integration/webhooks/"
	if len(p) > len(hook)+6 && p[:len(hook)] == hook {
		return p[:len(hook)+6] + "…"
	}
	return p
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

func newRequestID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// logger returns the request's logger.
func logger(c *fiber.Ctx) *slog.Logger {
	if r, ok := c.UserContext().Value(requestKey).(*requestInfo); ok {
		return r.logger()
	}
	return slog.Default()
}

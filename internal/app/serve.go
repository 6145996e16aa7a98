package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/platform/metrics"
	"github.com/switchboard/switchboard/internal/web/routes"
)

// serve runs the HTTP API until ctx ends (SIGTERM/SIGINT), then drains
// in-flight requests for up to ShutdownWait.
func serve(ctx context.Context, env Env) error {
	cfg, err := LoadConfig(env.Getenv)
	if err != nil {
		return err
	}
	cfg.Lifecycle = NewLifecycle()
	log := newLogger(cfg, env.Stderr)
	slog.SetDefault(log)
	if limit, gc := SetMemoryLimit(cfg, env.Getenv); limit > 0 || gc > 0 {
		log.Info("go runtime tuned for the XML cache", "memory_limit_bytes", limit, "gc_percent", gc, "from", "SWITCHBOARD_XML_CACHE_MAX_BYTES")
	}
	st, err := openStore(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	rdb, stopRedis, err := openRedis(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer stopRedis()

	app, stopServices, err := Build(ctx, cfg, st, rdb, log)
	if err != nil {
		return err
	}
	defer stopServices()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("SWITCHBOARD_LISTEN: %w", err)
	}
	log.Info("switchboard listening", "addr", ln.Addr().String(), "database", st.Dialect().Name)
	errc := make(chan error, 1)
	go func() { errc <- app.Listener(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	// Out of the load balancer first: readiness answers 503 "draining"
	// for SWITCHBOARD_SHUTDOWN_DRAIN while requests are still served; then
	// event streams end (clients reconnect to another replica); then the
	// listener closes, waiting for requests in flight.
	log.Info("shutting down: draining", "drain", cfg.ShutdownDrain, "grace", cfg.ShutdownWait)
	cfg.Lifecycle.draining.Store(true)
	if cfg.ShutdownDrain > 0 {
		t := time.NewTimer(cfg.ShutdownDrain)
		select {
		case <-t.C:
		case err := <-errc:
			t.Stop()
			return fmt.Errorf("http server: %w", err)
		}
	}
	cfg.Lifecycle.endStreams()
	if err := app.ShutdownWithTimeout(cfg.ShutdownWait); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

// Lifecycle is how serve takes a replica out before it stops: Draining
// turns every readiness to 503, and the event streams end on their own
// context before the listener closes (Fiber's shutdown would otherwise
// wait the whole grace for streams that never end).
type Lifecycle struct {
	draining atomic.Bool
	streams  context.Context
	cancel   context.CancelFunc
}

// NewLifecycle returns a lifecycle whose streams are open.
func NewLifecycle() *Lifecycle {
	ctx, cancel := context.WithCancel(context.Background())
	return &Lifecycle{streams: ctx, cancel: cancel}
}

// Draining reports whether shutdown has begun (false on a nil Lifecycle).
func (l *Lifecycle) Draining() bool { return l != nil && l.draining.Load() }

// Streams is the context event streams end with (never done on a nil
// Lifecycle).
func (l *Lifecycle) Streams() context.Context {
	if l == nil {
		return context.Background()
	}
	return l.streams
}

func (l *Lifecycle) endStreams() {
	if l != nil {
		l.cancel()
	}
}

// Build wires the HTTP app and the services behind it over an open store
// and Redis; serve and the test harness share it.
func Build(ctx context.Context, cfg Config, st *models.Store, rdb redis.UniversalClient, log *slog.Logger) (*fiber.App, func(), error) {
	m := metrics.New()
	parts, err := newServices(ctx, cfg, st, rdb, m, log)
	if err != nil {
		return nil, nil, err
	}
	registerOutboxMetrics(m, parts.outbox, log)
	stop := parts.stop
	if cfg.MetricsListen != "" {
		stopMetrics, err := serveMetrics(cfg.MetricsListen, m, log)
		if err != nil {
			parts.stop()
			return nil, nil, err
		}
		stop = func() { stopMetrics(); parts.stop() }
	}
	app := routes.New(routes.Deps{
		Store:            st,
		Redis:            rdb,
		KeyPrefix:        parts.keyPrefix,
		Logger:           log,
		BaseURL:          cfg.BaseURL,
		XMLAccessLog:     cfg.XMLAccessLog,
		SIPDomain:        cfg.SIPDomain,
		BodyLimit:        cfg.BodyLimit,
		Services:         parts.web,
		Ready:            parts.ready,
		Draining:         cfg.Lifecycle.Draining,
		XMLServable:      parts.xml.HoldsModels,
		OutboxDepth:      parts.outbox.Depth,
		Sessions:         parts.sessions,
		Metrics:          m,
		MetricsElsewhere: cfg.MetricsListen != "",
		Limits:           routes.Limits{RequestsPerSecond: cfg.RateLimit, Burst: cfg.RateBurst, AuthFailuresPerMinute: cfg.AuthFailureLimit, AccountFailures: cfg.AccountFailureLimit},
	})
	return app, stop, nil
}

// serveMetrics serves /metrics alone on its own address (a private network
// Prometheus scrapes without credentials).
func serveMetrics(addr string, m *metrics.Metrics, log *slog.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("SWITCHBOARD_METRICS_LISTEN: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	log.Info("metrics listening", "addr", ln.Addr().String())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

// gcPercent is the collector's target (GOGC) serve sets: the heap may grow
// half again over what is live between collections, not twice (Go's
// default of 100). Most of a replica's heap is the XML cache, whose models
// and documents hold no pointers for the collector to follow, so the more
// frequent collections cost little CPU (see BENCHMARKS.md, issue 28).
const gcPercent = 50

// SetMemoryLimit tunes the Go runtime for a replica whose heap is mostly
// the XML cache: unless GOGC is set, a collector target of gcPercent;
// unless GOMEMLIMIT is set, a soft memory limit of twice
// SWITCHBOARD_XML_CACHE_MAX_BYTES, at least 256 MiB, so a full cache at a
// million users does not let the heap grow past its bound's room. It
// returns the limit set (0: GOMEMLIMIT rules) and the target (0: GOGC
// rules).
func SetMemoryLimit(cfg Config, getenv func(string) string) (limit int64, gc int) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
		gc = gcPercent
	}
	if getenv("GOMEMLIMIT") == "" {
		limit = max(2*int64(cfg.XMLCacheBytes), 256<<20)
		debug.SetMemoryLimit(limit)
	}
	return limit, gc
}

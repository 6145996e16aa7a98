package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
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
	log := newLogger(cfg, env.Stderr)
	slog.SetDefault(log)
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
	log.Info("shutting down", "grace", cfg.ShutdownWait)
	if err := app.ShutdownWithTimeout(cfg.ShutdownWait); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
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

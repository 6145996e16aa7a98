package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/models"
	"github.com/switchboard/switchboard/routes"
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
	parts, err := newServices(ctx, cfg, st, rdb, log)
	if err != nil {
		return nil, nil, err
	}
	app := routes.New(routes.Deps{
		Store:       st,
		Redis:       rdb,
		Logger:      log,
		BaseURL:     cfg.BaseURL,
		BodyLimit:   cfg.BodyLimit,
		Extra:       parts.routes,
		Schemas:     parts.schemas,
		Ready:       parts.ready,
		OutboxDepth: parts.outbox.Depth,
	})
	return app, parts.stop, nil
}

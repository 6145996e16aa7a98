package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

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

	parts, err := newServices(ctx, cfg, st, rdb, log)
	if err != nil {
		return err
	}
	defer parts.stop()

	app := routes.New(routes.Deps{
		Store:     st,
		Redis:     rdb,
		Logger:    log,
		BaseURL:   cfg.BaseURL,
		BodyLimit: cfg.BodyLimit,
		Changed:   parts.changed,
		Extra:     parts.routes,
		Schemas:   parts.schemas,
		Ready:     parts.ready,
	})
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
	_ = time.Second
	return nil
}

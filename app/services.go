package app

import (
	"context"
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/models"
	"github.com/switchboard/switchboard/routes"
)

// services are the parts beyond configuration CRUD (FreeSWITCH XML, live
// calls), wired here so routes stays free of construction logic.
type services struct {
	routes  []routes.Route
	schemas map[string]any
	ready   map[string]func(context.Context) error
	changed func(ctx context.Context, tenant string)
	stops   []func()
}

func (s *services) stop() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
}

func newServices(ctx context.Context, cfg Config, st *models.Store, rdb redis.UniversalClient, log *slog.Logger) (*services, error) {
	s := &services{schemas: map[string]any{}, ready: map[string]func(context.Context) error{}}
	s.changed = func(context.Context, string) {}
	return s, nil
}

package app

import (
	"context"
	"log/slog"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/messaging"
	"github.com/switchboard/switchboard/models"
	"github.com/switchboard/switchboard/routes"
)

// newMessagingService wires SMS and WhatsApp: the send and status routes,
// the provider callbacks, and the outbox worker (every replica runs one;
// leases keep each message to one sender).
func newMessagingService(ctx context.Context, s *services, cfg Config, st *models.Store, rdb redis.UniversalClient, log *slog.Logger) {
	svc := messaging.New(st, rdb, messaging.Config{
		BaseURL:   cfg.BaseURL,
		Providers: messaging.Providers{Twilio: cfg.TwilioURL, Meta: cfg.MetaURL},
		Logger:    log.With("component", "messaging"),
		Replica:   replicaID(),
	})
	st.OnCommit(svc.Committed)
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); svc.Run(runCtx) }()
	s.stops = append(s.stops, func() { cancel(); wg.Wait() })
	s.routes = append(s.routes, routes.MessagingRoutes(svc, st, rdb, cfg.BaseURL)...)
	for name, sch := range routes.MessagingSchemas() {
		s.schemas[name] = sch
	}
}

package app

import (
	"context"
	"log/slog"

	"github.com/switchboard/switchboard/internal/comms/webhooks"
	"github.com/switchboard/switchboard/internal/models"
)

// newWebhookService wires outbound webhooks: the outbox subscriber that
// writes deliveries and the delivery routes. The worker starts with the
// outbox (startWebhookWorker), because it attempts deliveries only on the
// replica that holds the outbox lease.
func newWebhookService(s *services, cfg Config, st *models.Store, log *slog.Logger) {
	s.webhooks = webhooks.New(st, webhooks.Options{
		Group:        cfg.OutboxGroup,
		AllowPrivate: cfg.WebhookAllowPrivate,
		AllowHTTP:    cfg.WebhookAllowHTTP,
		DisableAfter: cfg.WebhookDisableAfter,
		RetryMin:     cfg.WebhookRetryMin,
		Logger:       log.With("component", "webhooks"),
	})
	s.subscribers = append(s.subscribers, s.webhooks)
	s.web.Webhooks = s.webhooks
}

// startWebhookWorker runs the delivery worker under the outbox lease.
func startWebhookWorker(ctx context.Context, s *services) {
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() { defer close(done); s.webhooks.Run(runCtx, s.outbox.Leading) }()
	s.stops = append(s.stops, func() { cancel(); <-done })
}

package app

import (
	"context"
	"log/slog"

	"github.com/switchboard/switchboard/internal/changes/outbox"
	"github.com/switchboard/switchboard/internal/models"
)

// startOutbox runs the outbox dispatcher for every subscriber the services
// registered. Every replica runs one; the lease lets one deliver at a time.
// A commit on this replica wakes it at once.
func startOutbox(ctx context.Context, s *services, cfg Config, st *models.Store, log *slog.Logger) error {
	d, err := outbox.New(st, outbox.Options{
		Group:  cfg.OutboxGroup,
		Holder: replicaID(),
		Logger: log.With("component", "outbox"),
	}, s.subscribers...)
	if err != nil {
		return err
	}
	st.OnAppend(d.Wake)
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = d.Run(runCtx)
	}()
	s.stops = append(s.stops, func() { cancel(); <-done })
	s.outbox = d
	return nil
}

package app

import (
	"log/slog"

	"github.com/switchboard/switchboard/internal/crm"
	"github.com/switchboard/switchboard/internal/models"
)

// newCRMServices wires the CRM's behaviour: ended calls logged as
// activities of the contacts they involve (an outbox subscriber).
func newCRMServices(s *services, st *models.Store, log *slog.Logger) {
	s.subscribers = append(s.subscribers, crm.NewCallActivity(st, log.With("component", "crm")))
}

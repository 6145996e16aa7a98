package app

import (
	"context"
	"log/slog"
	"sync"

	"github.com/switchboard/switchboard/internal/comms/fax"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/web/routes"
)

// FaxConfig is fax-to-e-mail delivery: the relay and the largest upload.
type FaxConfig struct {
	SMTP     fax.SMTPConfig // SWITCHBOARD_SMTP_URL, SWITCHBOARD_SMTP_FROM
	MaxBytes int            // SWITCHBOARD_FAX_MAX_BYTES
	// smtpURL is SWITCHBOARD_SMTP_URL as given, parsed with the sender.
	smtpURL string
}

// newFaxService wires fax to e-mail: the upload route the nodes' hangup
// hook PUTs to, the delivery worker (every replica runs one; leases keep
// each fax to one sender) and the readiness line saying whether e-mail
// delivery is on.
func newFaxService(ctx context.Context, s *services, cfg Config, st *models.Store, log *slog.Logger) {
	svc := fax.New(st, fax.Config{Dir: cfg.Media.Dir, SMTP: cfg.Fax.SMTP, Replica: replicaID(), Logger: log.With("component", "fax")})
	s.web.Fax, s.web.FaxMaxBytes = svc, cfg.Fax.MaxBytes
	s.ready["fax_email"] = func(context.Context) error {
		if !svc.DeliveryEnabled() {
			return &routes.Informational{State: "off: SWITCHBOARD_SMTP_URL not set; received faxes are kept and queued"}
		}
		return &routes.Informational{State: "on"}
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); svc.Run(runCtx) }()
	s.stops = append(s.stops, func() { cancel(); wg.Wait() })
}

package app

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"sync"

	"github.com/switchboard/switchboard/internal/comms/fax"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/web/routes"
)

// FaxConfig is fax-to-e-mail delivery: the relay and the largest upload.
type FaxConfig struct {
	SMTP     fax.SMTPConfig // SWITCHBOARD_SMTP_URL, SWITCHBOARD_SMTP_FROM
	MaxBytes int            // SWITCHBOARD_FAX_MAX_BYTES
}

var faxVariables = []envVar{
	{"SWITCHBOARD_SMTP_URL", "", "mail relay for received faxes, smtp://user:password@host:port (STARTTLS when offered; port 587 by default); unset: faxes are kept and queued, not e-mailed"},
	{"SWITCHBOARD_SMTP_FROM", "", "sender address of fax e-mails (required with SWITCHBOARD_SMTP_URL)"},
	{"SWITCHBOARD_FAX_MAX_BYTES", "20971520", "largest fax a node may upload (413 beyond)"},
}

func init() { Variables = append(Variables, faxVariables...) }

func loadFaxConfig(get func(name, def string) string) (FaxConfig, error) {
	var c FaxConfig
	smtp, err := fax.ParseSMTP(get("SWITCHBOARD_SMTP_URL", ""), get("SWITCHBOARD_SMTP_FROM", ""))
	if err != nil {
		return c, err
	}
	c.SMTP = smtp
	n, err := strconv.Atoi(get("SWITCHBOARD_FAX_MAX_BYTES", "20971520"))
	if err != nil || n < 1024 || n > 1<<30 {
		return c, fmt.Errorf("SWITCHBOARD_FAX_MAX_BYTES: must be a number of bytes from 1024 to 1073741824")
	}
	c.MaxBytes = n
	return c, nil
}

// newFaxService wires fax to e-mail: the upload route the nodes' hangup
// hook PUTs to, the delivery worker (every replica runs one; leases keep
// each fax to one sender) and the readiness line saying whether e-mail
// delivery is on.
func newFaxService(ctx context.Context, s *services, cfg Config, st *models.Store, log *slog.Logger) {
	svc := fax.New(st, fax.Config{Dir: cfg.Media.Dir, SMTP: cfg.Fax.SMTP, Replica: replicaID(), Logger: log.With("component", "fax")})
	s.routes = append(s.routes, routes.FaxRoutes(svc, s.xml, cfg.Fax.MaxBytes)...)
	for name, sch := range routes.FaxSchemas() {
		s.schemas[name] = sch
	}
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

// Package fax delivers faxes received by special endpoints of application
// fax_to_email (resources.md §2.13): a FreeSWITCH node uploads the TIFF
// rxfax wrote, the service stores it with a queued delivery in one step,
// and its worker e-mails it to the endpoint's fax_email, retrying an SMTP
// outage with backoff until the relay accepts it. A row leased by a worker
// that died is taken again after the lease, so a restart loses nothing.
package fax

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/platform/worker"
)

// Delivery states.
const (
	StatusQueued = "queued" // waiting for (another) attempt
	StatusSent   = "sent"   // the relay accepted it
	StatusFailed = "failed" // refused for good, or out of attempts
)

// Config tunes the service; zero values take the defaults.
type Config struct {
	// Dir is the media library root; faxes go to <Dir>/<tenant>/fax/received/<call uuid>.tif.
	Dir  string
	SMTP SMTPConfig
	// Replica names this worker's leases.
	Replica     string
	Lease       time.Duration // 2m
	Poll        time.Duration // 1s
	BackoffBase time.Duration // 30s
	BackoffMax  time.Duration // 30m
	MaxAttempts int           // 20 (about eight hours at the maximum backoff)
	Logger      *slog.Logger
}

// Service stores received faxes and e-mails them.
type Service struct {
	db   models.Querier
	cfg  Config
	log  *slog.Logger
	loop *worker.Loop // the delivery worker (Run); Notify wakes it
}

// New builds the service on the store's database.
func New(st *models.Store, cfg Config) *Service {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.Lease, 2*time.Minute)
	def(&cfg.Poll, time.Second)
	def(&cfg.BackoffBase, 30*time.Second)
	def(&cfg.BackoffMax, 30*time.Minute)
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Replica == "" {
		cfg.Replica = randomToken()
	}
	s := &Service{db: st.Querier(), cfg: cfg, log: cfg.Logger}
	s.loop = worker.New(worker.Options{Name: "fax delivery queue", Poll: cfg.Poll, Logger: cfg.Logger})
	return s
}

// DeliveryEnabled says whether faxes are e-mailed (SMTP configured).
func (s *Service) DeliveryEnabled() bool { return s.cfg.SMTP.Enabled() }

// Fax is one received fax and its delivery.
type Fax struct {
	ID         int64  `db:"id" json:"id"`
	TenantID   int64  `db:"tenant_id" json:"-"`
	EndpointID int64  `db:"endpoint_id" json:"endpoint_id"`
	CallUUID   string `db:"call_uuid" json:"call_uuid"`
	Email      string `db:"email" json:"-"`
	File       string `db:"file" json:"-"`
	SizeBytes  int64  `db:"size_bytes" json:"size_bytes"`
	Pages      int    `db:"pages" json:"pages"`
	Status     string `db:"status" json:"status"`
	Attempts   int    `db:"attempts" json:"attempts"`
	LastError  string `db:"last_error" json:"-"`
	CreatedAt  string `db:"created_at" json:"created_at"`
	SentAt     string `db:"sent_at" json:"-"`
}

// ErrNoEndpoint: the tenant has no fax_to_email endpoint with that id.
var ErrNoEndpoint = errors.New("no fax endpoint")

// Receive stores the fax of one call to endpoint endpointID of tenant and
// queues its e-mail, in that order: the file is in place before the row
// that sends it commits. A repeated upload for the same call answers the
// stored fax (created false) and sends nothing again.
func (s *Service) Receive(ctx context.Context, tenant string, endpointID int64, callUUID string, tiff []byte) (Fax, bool, error) {
	if !naming.ValidCallUUID(callUUID) {
		return Fax{}, false, ErrNoEndpoint
	}
	pages, err := TIFFPages(tiff)
	if err != nil {
		return Fax{}, false, err
	}
	var ep struct {
		TenantID int64          `db:"tenant_id"`
		Email    sql.NullString `db:"fax_email"`
	}
	err = s.db.GetContext(ctx, &ep, s.db.Rebind(`SELECT e.tenant_id, e.fax_email FROM special_endpoints e JOIN tenants t ON t.id = e.tenant_id
		WHERE t.tenant = ? AND e.id = ? AND e.kind = 'application' AND e.application = 'fax_to_email'`), tenant, endpointID)
	if errors.Is(err, models.ErrNotFound) || err == nil && ep.Email.String == "" {
		return Fax{}, false, ErrNoEndpoint
	}
	if err != nil {
		return Fax{}, false, fmt.Errorf("fax endpoint: %w", err)
	}
	if f, err := s.byCall(ctx, ep.TenantID, callUUID); err == nil {
		return f, false, nil
	} else if !errors.Is(err, models.ErrNotFound) {
		return Fax{}, false, err
	}
	rel := filepath.ToSlash(filepath.Join(tenant, "fax", "received", callUUID+".tif"))
	if err := s.writeFile(rel, tiff); err != nil {
		return Fax{}, false, err
	}
	now := models.FormatTime(time.Now())
	_, err = s.db.ExecContext(ctx, s.db.Rebind(`INSERT INTO fax_deliveries (tenant_id, endpoint_id, call_uuid, email, file, size_bytes, pages, status, next_attempt_at, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), ep.TenantID, endpointID, callUUID, ep.Email.String, rel, len(tiff), pages, StatusQueued, now, now)
	if err != nil {
		// A concurrent upload of the same call won the unique key.
		if f, gerr := s.byCall(ctx, ep.TenantID, callUUID); gerr == nil {
			return f, false, nil
		}
		return Fax{}, false, fmt.Errorf("queue fax: %w", err)
	}
	f, err := s.byCall(ctx, ep.TenantID, callUUID)
	if err != nil {
		return Fax{}, false, err
	}
	s.log.Info("fax received", "tenant", tenant, "endpoint_id", endpointID, "call_uuid", callUUID, "pages", pages, "bytes", len(tiff))
	s.Notify()
	return f, true, nil
}

func (s *Service) byCall(ctx context.Context, tenantID int64, callUUID string) (Fax, error) {
	var f Fax
	err := s.db.GetContext(ctx, &f, s.db.Rebind(`SELECT id, tenant_id, endpoint_id, call_uuid, email, file, size_bytes, pages, status, attempts, last_error, created_at, sent_at
		FROM fax_deliveries WHERE tenant_id = ? AND call_uuid = ?`), tenantID, callUUID)
	return f, err
}

// writeFile places the fax atomically (a temporary file renamed), so a
// crash leaves no half file under the name a row points to.
func (s *Service) writeFile(rel string, b []byte) error {
	path := filepath.Join(s.cfg.Dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("fax directory: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".fax-*")
	if err != nil {
		return fmt.Errorf("store fax: %w", err)
	}
	defer os.Remove(tmp.Name()) //nolint:errcheck // gone after the rename
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("store fax: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("store fax: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("store fax: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("store fax: %w", err)
	}
	return nil
}

// Notify wakes the worker (a fax was queued).
func (s *Service) Notify() {
	s.loop.Wake()
}

func randomToken() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

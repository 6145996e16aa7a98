package messaging

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/platform/egress"
	"github.com/switchboard/switchboard/internal/platform/keyprefix"
	"github.com/switchboard/switchboard/internal/platform/worker"
)

// Config configures the service.
type Config struct {
	// BaseURL is Switchboard's public URL; providers call back under
	// <BaseURL>/integration/messaging/.
	BaseURL string
	// Providers builds the adapters (base URLs, HTTP client).
	Providers Providers
	Logger    *slog.Logger
	// Replica names this process in outbox leases.
	Replica string
	// KeyPrefix starts the Redis keys of the per-channel send rate: the
	// installation's (models.Store.KeyPrefix); "" means "sb:".
	KeyPrefix string
	// Group keeps servers that share a database without being replicas
	// of one installation apart (tests): the worker sends only the
	// messages queued in its group. Replicas share one (default "").
	Group string
	// Inbound delivers received messages by inbound_destination type
	// ("chat_channel"); types without one are only stored.
	Inbound map[string]InboundDeliverer
	// Worker tuning; zero values take the defaults.
	Lease       time.Duration // how long a claim holds a message (30s)
	Poll        time.Duration // idle poll interval (200ms)
	Batch       int           // rows claimed per round (100)
	Concurrency int           // messages in flight per replica (32)
	MaxAttempts int           // before a transiently failing message fails (8)
	BackoffBase time.Duration // first retry delay, doubled per attempt (2s)
	BackoffMax  time.Duration // (10m)
}

// Service is messaging: sends, the outbox worker, statuses and callbacks.
type Service struct {
	cfg      Config
	store    *models.Store
	db       *db
	rdb      redis.UniversalClient
	channels *channelCache
	log      *slog.Logger
	// loop is the outbox worker (Run); Wake wakes it. sem bounds its sends
	// in flight, sends counts them.
	loop  *worker.Loop
	sem   chan struct{}
	sends sync.WaitGroup
}

// New builds the service over the store and Redis (for rate limits).
func New(st *models.Store, rdb redis.UniversalClient, cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.KeyPrefix = keyprefix.OrDefault(cfg.KeyPrefix)
	if cfg.Providers.Client == nil {
		cfg.Providers.Client = egress.NewClient(egress.Options{MaxBody: 1 << 16})
	}
	if cfg.Providers.Platform == nil {
		cfg.Providers.Platform = egress.NewClient(egress.Options{Guard: egress.Guard{AllowAll: true}, MaxBody: 1 << 16})
	}
	if cfg.Providers.Twilio == "" {
		cfg.Providers.Twilio = "https://api.twilio.com"
	}
	if cfg.Providers.Meta == "" {
		cfg.Providers.Meta = "https://graph.facebook.com/v21.0"
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.Lease, 30*time.Second)
	def(&cfg.Poll, 200*time.Millisecond)
	def(&cfg.BackoffBase, 2*time.Second)
	def(&cfg.BackoffMax, 10*time.Minute)
	if cfg.Batch <= 0 {
		cfg.Batch = 100
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 32
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 8
	}
	if cfg.Replica == "" {
		cfg.Replica = "replica"
	}
	s := &Service{
		cfg: cfg, store: st, rdb: rdb, log: cfg.Logger,
		db:       &db{x: st.Querier(), sqlite: st.Dialect().SQLite, st: st, group: cfg.Group},
		channels: newChannelCache(st, 5*time.Second),
		sem:      make(chan struct{}, cfg.Concurrency),
	}
	s.loop = worker.New(worker.Options{Name: "messaging outbox", Poll: cfg.Poll, Logger: cfg.Logger})
	return s
}

// Error is a refusal the API shows with its status and code.
type Error struct {
	Status int
	Code   string
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

func refuse(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Msg: fmt.Sprintf(format, args...)}
}

// SendRequest is the body of POST /api/messaging/send.
type SendRequest struct {
	ChannelID  int64           `json:"channel_id"`
	To         string          `json:"to"`
	Body       *string         `json:"body"`
	TemplateID string          `json:"template_id"`
	ContactID  *int64          `json:"contact_id"`
	Variables  json.RawMessage `json:"variables"`
}

// Caller is what Send needs to know about who sends.
type Caller interface {
	MayTenant(tenant string) bool
}

// whatsAppWindow is how long an inbound message lets a business answer
// with free text (Meta's customer service window).
const whatsAppWindow = 24 * time.Hour

// Send validates a send and queues it: the message row and its outbox row
// are committed together, nothing is sent inside the request.
func (s *Service) Send(ctx context.Context, who Caller, in SendRequest) (*Message, error) {
	verr := &models.ValidationError{Fields: map[string]string{}}
	if in.ChannelID <= 0 {
		verr.Fields["channel_id"] = "required: the id of a messaging channel"
		return nil, verr
	}
	ch, err := s.channels.get(ctx, in.ChannelID)
	if errors.Is(err, models.ErrNotFound) || (err == nil && !who.MayTenant(ch.Tenant)) {
		// Another tenant's channel is indistinguishable from a missing one.
		verr.Fields["channel_id"] = fmt.Sprintf("messaging channel %d does not exist", in.ChannelID)
		return nil, verr
	}
	if err != nil {
		return nil, err
	}
	if !ch.Enabled {
		return nil, refuse(http.StatusUnprocessableEntity, "channel_disabled", "messaging channel %d is disabled", ch.ID)
	}
	if s.cfg.Providers.For(ch.Provider) == nil {
		return nil, refuse(http.StatusUnprocessableEntity, "provider_not_supported", "provider %s has no adapter in this release; use twilio, meta_cloud or kannel", ch.Provider)
	}
	m := &Message{TenantID: ch.TenantID, Tenant: ch.Tenant, ChannelID: ch.ID, From: ch.Sender, Direction: "outbound"}
	to, err := normaliseNumber(in.To, ch.DefaultCountry)
	if err != nil {
		verr.Fields["to"] = err.Error()
	}
	m.To = to
	vars, vErr := parseVariables(in.Variables)
	if vErr != nil {
		verr.Fields["variables"] = vErr.Error()
	}
	var tpl *Template
	switch {
	case ch.TemplateOnly:
		if in.TemplateID == "" {
			verr.Fields["template_id"] = "required: this channel sends approved templates only"
		}
		if in.Body != nil {
			verr.Fields["body"] = "not allowed: this channel sends approved templates only"
		}
	case in.TemplateID != "" && in.Body != nil:
		verr.Fields["body"] = "give either body or template_id, not both"
	case in.TemplateID == "" && (in.Body == nil || strings.TrimSpace(*in.Body) == ""):
		verr.Fields["body"] = "required: the message text (or a template_id)"
	case in.TemplateID == "" && len(vars) > 0:
		verr.Fields["variables"] = "only with a template_id"
	}
	if in.TemplateID != "" && verr.Fields["template_id"] == "" {
		t, ok := ch.template(in.TemplateID)
		switch {
		case !ok:
			verr.Fields["template_id"] = fmt.Sprintf("channel %d has no template %q", ch.ID, in.TemplateID)
		case t.Status != "approved":
			return nil, refuse(http.StatusUnprocessableEntity, "template_not_approved", "template %s is %s; only approved templates can be sent", t.ID, t.Status)
		default:
			if err := checkVariables(t, vars); err != nil && vErr == nil {
				verr.Fields["variables"] = err.Error()
			}
			tpl = &t
		}
	}
	if len(verr.Fields) > 0 {
		return nil, verr
	}
	if tpl != nil {
		m.TemplateID, m.Variables, m.Body = tpl.ID, vars, render(tpl.Body, vars)
	} else {
		m.Body = *in.Body
	}
	if n := len([]rune(m.Body)); n > ch.MaxBodyChars {
		return nil, &models.ValidationError{Fields: map[string]string{"body": fmt.Sprintf("%d characters; this channel allows at most %d", n, ch.MaxBodyChars)}}
	}
	enc := Encode(m.Body)
	m.Encoding, m.Segments = enc.Name, enc.Segments
	if ch.WhatsApp() {
		m.Encoding, m.Segments = "", 0
	} else if max := maxSegments(ch.MaxBodyChars); enc.Segments > max {
		return nil, &models.ValidationError{Fields: map[string]string{"body": fmt.Sprintf("needs %d %s segments; this channel allows at most %d", enc.Segments, strings.ToUpper(enc.Name), max)}}
	}
	if in.ContactID != nil {
		if err := s.checkContact(ctx, ch, *in.ContactID); err != nil {
			return nil, err
		}
		m.ContactID = in.ContactID
	}
	if ch.WhatsApp() && tpl == nil {
		last, err := s.db.lastInbound(ctx, ch.ID, m.To)
		if err != nil {
			return nil, fmt.Errorf("whatsapp window: %w", err)
		}
		if time.Since(last) > whatsAppWindow {
			return nil, refuse(http.StatusUnprocessableEntity, "whatsapp_window_closed",
				"WhatsApp 24-hour rule: free-form messages may only answer a customer who wrote within the last 24 hours; %s has not, so send an approved template instead", m.To)
		}
	}
	if err := s.db.insertOutbound(ctx, m); err != nil {
		return nil, err
	}
	s.Wake()
	return m, nil
}

// maxSegments is the segment budget of a channel: max_body_chars of GSM-7
// text split into concatenated parts.
func maxSegments(maxChars int) int {
	if maxChars <= gsm7Single {
		return 1
	}
	return (maxChars + gsm7Multi - 1) / gsm7Multi
}

// parseVariables accepts ["a","b"] or {"1":"a","2":"b"}.
func parseVariables(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err == nil {
		return list, nil
	}
	var byNum map[string]string
	if err := json.Unmarshal(raw, &byNum); err != nil {
		return nil, errors.New(`must be an array of strings or an object {"1": "...", "2": "..."}`)
	}
	out := make([]string, len(byNum))
	for k, v := range byNum {
		n, err := strconv.Atoi(k)
		if err != nil || n < 1 || n > len(byNum) {
			return nil, fmt.Errorf("keys must be 1..%d, got %q", len(byNum), k)
		}
		out[n-1] = v
	}
	return out, nil
}

// checkContact makes contact_id a contact of the channel's tenant that has
// not opted out of this kind of message.
func (s *Service) checkContact(ctx context.Context, ch *Channel, id int64) error {
	res := s.store.Registry().Resource("contacts")
	rec, err := s.store.Get(ctx, res, models.Owner{TenantID: ch.TenantID, Tenant: ch.Tenant}, strconv.FormatInt(id, 10))
	if errors.Is(err, models.ErrNotFound) {
		return models.FieldError("contact_id", "contact %d does not exist", id)
	}
	if err != nil {
		return err
	}
	optOut := "opt_out_sms"
	if ch.WhatsApp() {
		optOut = "opt_out_whatsapp"
	}
	if rec[optOut] == true {
		return refuse(http.StatusUnprocessableEntity, "contact_opted_out", "contact %d has opted out of %s messages (%s)", id, ch.Type, optOut)
	}
	return nil
}

// Messages lists messages.
func (s *Service) Messages(ctx context.Context, f Filter) ([]Message, int, error) {
	return s.db.list(ctx, f)
}

// Message returns one message when it belongs to a tenant the caller may see.
func (s *Service) Message(ctx context.Context, who Caller, id int64) (*Message, error) {
	m, err := s.db.get(ctx, id)
	if err != nil {
		return nil, err
	}
	if m.Tenant == "" || !who.MayTenant(m.Tenant) {
		return nil, models.ErrNotFound
	}
	return m, nil
}

// Wake makes the worker look at the outbox now.
func (s *Service) Wake() { s.loop.Wake() }

// callbackURL is where a channel's provider reports.
func (s *Service) callbackURL(ch *Channel) string {
	u := strings.TrimRight(s.cfg.BaseURL, "/") + "/integration/messaging/" + ch.Provider + "/" + strconv.FormatInt(ch.ID, 10)
	if ch.Provider == "kannel" || ch.Provider == "smpp" {
		u = withParam(u, "secret", ch.Credentials["callback_secret"])
	}
	return u
}

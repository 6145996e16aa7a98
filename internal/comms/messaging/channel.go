package messaging

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/models"
)

// Channel is a messaging channel as the sender needs it: credentials
// opened, templates parsed.
type Channel struct {
	ID             int64
	TenantID       int64
	Tenant         string
	Name           string
	Type           string // sms or whatsapp
	Provider       string
	Sender         string
	Credentials    map[string]string
	TemplateOnly   bool
	Templates      []Template
	DefaultCountry string
	MaxBodyChars   int
	RatePerSecond  int
	Enabled        bool
	Inbound        *Destination
}

// WhatsApp reports whether the channel sends WhatsApp messages.
func (c *Channel) WhatsApp() bool { return c.Type == "whatsapp" }

// Template is one of a channel's message templates.
type Template struct {
	ID            string `json:"template_id"`
	Name          string `json:"name"`
	Language      string `json:"language"`
	Body          string `json:"body"`
	VariableCount int    `json:"variable_count"`
	Status        string `json:"status"`
}

// Destination is where a channel's inbound messages go.
type Destination struct {
	Type   string `json:"type"`
	Target string `json:"target"`
}

// template returns the channel's template with that id.
func (c *Channel) template(id string) (Template, bool) {
	for _, t := range c.Templates {
		if t.ID == id {
			return t, true
		}
	}
	return Template{}, false
}

// channelCache keeps opened channels briefly: the worker looks one up for
// every message, and a channel edit is visible within ttl.
type channelCache struct {
	store *models.Store
	ttl   time.Duration
	mu    sync.Mutex
	items map[int64]cachedChannel
}

type cachedChannel struct {
	ch  *Channel
	err error
	at  time.Time
}

func newChannelCache(st *models.Store, ttl time.Duration) *channelCache {
	return &channelCache{store: st, ttl: ttl, items: map[int64]cachedChannel{}}
}

// get returns channel id of any tenant (models.ErrNotFound when it does
// not exist); callers check the tenant.
func (cc *channelCache) get(ctx context.Context, id int64) (*Channel, error) {
	cc.mu.Lock()
	it, ok := cc.items[id]
	cc.mu.Unlock()
	if ok && time.Since(it.at) < cc.ttl {
		return it.ch, it.err
	}
	ch, err := loadChannel(ctx, cc.store, id)
	if err != nil && !errors.Is(err, models.ErrNotFound) {
		return nil, err // transient: not cached
	}
	cc.mu.Lock()
	cc.items[id] = cachedChannel{ch: ch, err: err, at: time.Now()}
	cc.mu.Unlock()
	return ch, err
}

// forget drops a channel so the next lookup reads it again.
func (cc *channelCache) forget(id int64) {
	cc.mu.Lock()
	delete(cc.items, id)
	cc.mu.Unlock()
}

func loadChannel(ctx context.Context, st *models.Store, id int64) (*Channel, error) {
	var row struct {
		TenantID int64  `db:"tenant_id"`
		Tenant   string `db:"tenant"`
	}
	err := st.Querier().GetContext(ctx, &row, st.Querier().Rebind(`SELECT c.tenant_id, t.tenant FROM messaging_channels c JOIN tenants t ON t.id = c.tenant_id WHERE c.id = ?`), id)
	if errors.Is(err, models.ErrNotFound) {
		return nil, models.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("messaging channel %d: %w", id, err)
	}
	res := st.Registry().Resource("messaging_channels")
	recs, err := st.Records(ctx, res, models.Owner{TenantID: row.TenantID, Tenant: row.Tenant}, map[string]any{"id": id})
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, models.ErrNotFound
	}
	return channelFromRecord(row.TenantID, row.Tenant, recs[0])
}

func channelFromRecord(tenantID int64, tenant string, r models.Record) (*Channel, error) {
	ch := &Channel{
		TenantID: tenantID, Tenant: tenant,
		Name: str(r["name"]), Type: str(r["type"]), Provider: str(r["provider"]), Sender: str(r["sender"]),
		TemplateOnly: r["template_only"] == true, Enabled: r["enabled"] == true,
		DefaultCountry: str(r["default_country"]),
		MaxBodyChars:   int(num(r["max_body_chars"])), RatePerSecond: int(num(r["rate_per_second"])),
		Credentials: map[string]string{},
	}
	ch.ID = num(r["id"])
	if ch.MaxBodyChars == 0 {
		ch.MaxBodyChars = 1600
		if ch.WhatsApp() {
			ch.MaxBodyChars = 4096
		}
	}
	if ch.RatePerSecond <= 0 {
		ch.RatePerSecond = 1
	}
	if s, ok := r["credentials"].(string); ok && s != "" {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			return nil, fmt.Errorf("messaging channel %d: credentials: %w", ch.ID, err)
		}
		for k, v := range m {
			ch.Credentials[k] = fmt.Sprint(v)
		}
	}
	if err := remarshal(r["templates"], &ch.Templates); err != nil {
		return nil, fmt.Errorf("messaging channel %d: templates: %w", ch.ID, err)
	}
	if r["inbound_destination"] != nil {
		ch.Inbound = &Destination{}
		if err := remarshal(r["inbound_destination"], ch.Inbound); err != nil {
			return nil, fmt.Errorf("messaging channel %d: inbound_destination: %w", ch.ID, err)
		}
	}
	return ch, nil
}

func remarshal(v, into any) error {
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func num(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int:
		return int64(x)
	case float64:
		return int64(x)
	}
	return 0
}

func isNotFound(err error) bool { return errors.Is(err, models.ErrNotFound) }

// Committed drops channels a committed write touched, so this replica
// sends with the new settings at once (others within the cache's ttl).
// It is a models.Store OnCommit hook.
func (s *Service) Committed(_ context.Context, chs []changes.Change) {
	for _, c := range chs {
		if c.Resource != "messaging_channels" {
			continue
		}
		if id, err := strconv.ParseInt(c.Key, 10, 64); err == nil {
			s.channels.forget(id)
		}
	}
}

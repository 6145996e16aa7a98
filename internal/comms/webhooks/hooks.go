package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/switchboard/switchboard/internal/models"
)

// The webhook resources; each is also its table's name.
const (
	KindTenant   = "outbound_webhooks"
	KindPlatform = "webhooks"
	KindSystem   = "system_webhooks"
)

// Kinds lists the webhook resources.
var Kinds = []string{KindTenant, KindPlatform, KindSystem}

// Hook is one webhook as deliveries need it (secrets opened).
type Hook struct {
	Kind        string
	ID          int64
	Tenant      string // tenant webhooks: the owning tenant
	URL         string
	Events      []string
	Filter      map[string]any
	Secret      string
	ContentType string
	Headers     map[string]string
	Timeout     time.Duration
	MaxAttempts int
	Enabled     bool
	// Suspended is set when the webhook was disabled automatically: it
	// still collects deliveries (held until it is enabled again), so no
	// event is lost to an outage at the receiver.
	Suspended bool
	Tenants   []string // platform webhooks: empty = every tenant
	// Created is when the webhook was created: it receives the events
	// that happened from then on, not the backlog an outbox that lags
	// still holds.
	Created time.Time
}

// hookFrom reads a record from models.Store.Records.
func hookFrom(kind, tenant string, rec models.Record) (*Hook, error) {
	h := &Hook{Kind: kind, Tenant: tenant, ContentType: "application/json", Timeout: 5 * time.Second, MaxAttempts: 8}
	h.ID, _ = rec["id"].(int64)
	h.URL, _ = rec["url"].(string)
	h.Events = stringList(rec["events"])
	h.Tenants = stringList(rec["tenants"])
	h.Filter, _ = rec["filter"].(map[string]any)
	h.Secret, _ = rec["secret"].(string)
	h.Enabled, _ = rec["enabled"].(bool)
	if v, ok := rec["created_at"].(string); ok {
		h.Created, _ = time.Parse(time.RFC3339Nano, v)
	}
	reason, _ := rec["disabled_reason"].(string)
	h.Suspended = !h.Enabled && reason != ""
	if v, ok := rec["content_type"].(string); ok && v != "" {
		h.ContentType = v
	}
	if v, ok := rec["timeout_ms"].(int64); ok && v > 0 {
		h.Timeout = time.Duration(v) * time.Millisecond
	}
	if v, ok := rec["max_attempts"].(int64); ok && v > 0 {
		h.MaxAttempts = int(v)
	}
	if raw, ok := rec["headers"].(string); ok && raw != "" {
		if err := json.Unmarshal([]byte(raw), &h.Headers); err != nil {
			return nil, fmt.Errorf("webhook %s/%d headers: %w", kind, h.ID, err)
		}
	}
	return h, nil
}

func stringList(v any) []string {
	switch l := v.(type) {
	case []string:
		return l
	case []any:
		out := make([]string, 0, len(l))
		for _, x := range l {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// wants reports whether h subscribes to ev.
func (h *Hook) wants(ev *Event) bool {
	if !(h.Enabled || h.Suspended) || (!ev.at.IsZero() && ev.at.Before(h.Created)) {
		return false
	}
	if !slices.Contains(h.Events, ev.Type) && (callEventAliases[ev.Type] == "" || !slices.Contains(h.Events, callEventAliases[ev.Type])) {
		return false
	}
	if h.Kind == KindPlatform && len(h.Tenants) > 0 && !slices.Contains(h.Tenants, ev.Tenant) {
		return false
	}
	return matchFilter(h.Filter, ev.data)
}

// matchFilter applies a webhook's filter {extensions, queues, dids,
// direction} to an event's data: a filter key only narrows events whose
// data carries the field it looks at.
func matchFilter(f map[string]any, data map[string]any) bool {
	if len(f) == 0 || data == nil {
		return true
	}
	field := func(names ...string) []string {
		var out []string
		for _, n := range names {
			if s, ok := data[n].(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	anyIn := func(list []string, vals []string) bool {
		for _, v := range vals {
			if slices.Contains(list, v) {
				return true
			}
		}
		return false
	}
	if d, ok := f["direction"].(string); ok && d != "" {
		if got := field("direction"); len(got) > 0 && got[0] != d {
			return false
		}
	}
	if l := stringList(f["extensions"]); len(l) > 0 {
		if got := field("extension", "destination", "caller_id_number"); len(got) > 0 && !anyIn(l, got) {
			return false
		}
	}
	if l := stringList(f["dids"]); len(l) > 0 {
		if got := field("did", "destination", "to", "caller_id_number"); len(got) > 0 && !anyIn(l, got) {
			return false
		}
	}
	if l := stringList(f["queues"]); len(l) > 0 {
		if got := field("queue"); len(got) > 0 && !anyIn(l, got) {
			return false
		}
	}
	return true
}

// hookCache keeps webhook lists for a short time: the subscriber drops
// them when it handles a change of a webhook resource (so, in order with
// the events), and the TTL bounds what another replica's write or the
// worker's own counters could leave stale.
type hookCache struct {
	st  *models.Store
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]cached
	// gen counts forgets: a read that started before one is not cached,
	// so a slow read cannot put back what a change made stale.
	gen uint64
}

type cached struct {
	hooks []*Hook
	until time.Time
}

func (c *hookCache) forget() {
	c.mu.Lock()
	c.m = nil
	c.gen++
	c.mu.Unlock()
}

// list returns the webhooks of kind owned by tenant ("" for platform
// kinds), every one of them, enabled or not.
func (c *hookCache) list(ctx context.Context, kind, tenant string) ([]*Hook, error) {
	key := kind + "/" + tenant
	c.mu.Lock()
	if e, ok := c.m[key]; ok && time.Now().Before(e.until) {
		c.mu.Unlock()
		return e.hooks, nil
	}
	gen := c.gen
	c.mu.Unlock()
	var o models.Owner
	if kind == KindTenant {
		var err error
		if o, err = c.st.Tenant(ctx, tenant); err != nil {
			if errors.Is(err, models.ErrNotFound) {
				return nil, nil
			}
			return nil, err
		}
	}
	recs, err := c.st.Records(ctx, c.st.Registry().Resource(kind), o, nil)
	if err != nil {
		return nil, err
	}
	hooks := make([]*Hook, 0, len(recs))
	for _, r := range recs {
		h, err := hookFrom(kind, tenant, r)
		if err != nil {
			return nil, err
		}
		hooks = append(hooks, h)
	}
	c.mu.Lock()
	if c.gen == gen {
		if c.m == nil {
			c.m = map[string]cached{}
		}
		c.m[key] = cached{hooks: hooks, until: time.Now().Add(c.ttl)}
	}
	c.mu.Unlock()
	return hooks, nil
}

// get finds one webhook (nil when it no longer exists).
func (c *hookCache) get(ctx context.Context, kind, tenant string, id int64) (*Hook, error) {
	hooks, err := c.list(ctx, kind, tenant)
	if err != nil {
		return nil, err
	}
	for _, h := range hooks {
		if h.ID == id {
			return h, nil
		}
	}
	return nil, nil
}

// hookLabel names a webhook in logs and errors.
func hookLabel(kind string, id int64) string { return kind + "/" + strconv.FormatInt(id, 10) }

package fsxml

import (
	"container/list"
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/singleflight"

	"github.com/switchboard/switchboard/internal/freeswitch/dialplan"
	"github.com/switchboard/switchboard/internal/freeswitch/gateways/sofiaconf"
	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
)

// The render path reads typed, prepared models from process memory:
//
//   - one tenantModel per tenant (load.go), valid for one tenant
//     configuration generation of one Redis dataset;
//   - one platformModel (trunks, servers, DIDs seen) for one platform
//     generation.
//
// A fetch reads the generations (gens.go) before anything else, so a model
// is used only under the generation it was built for and a write, which
// bumps a generation when it is known to have committed, is visible on the
// very next fetch. Models are built on first use; concurrent fetches
// needing the same one wait for a single build. Tenant models live in a
// least-recently-used cache bounded by the bytes their rows took.

// modelCache holds the models.
type modelCache struct {
	tenants  *weightedLRU[tenantEntry]
	platform atomic.Pointer[platformEntry]
	flight   singleflight.Group
}

type tenantEntry struct {
	epoch, gen uint64 // the generations the model was built under
	m          *tenantModel
}

type platformEntry struct {
	epoch, gen uint64
	m          *platformModel
}

func newModelCache(maxBytes int) *modelCache {
	return &modelCache{tenants: newWeightedLRU[tenantEntry](maxBytes)}
}

// tenantModel returns the model of tenant valid under g, building it when
// the cache has none (or an older one).
func (s *Service) tenantModel(ctx context.Context, tenant string, g gens) (*tenantModel, error) {
	key := lowerASCII(tenant)
	e, ok := s.models.tenants.get(key)
	if ok && e.epoch == g.epoch && e.gen == g.tgen {
		return e.m, nil
	}
	if w := s.restoring.Load(); w != nil {
		// The last process's models are being restored: this one may be
		// among them.
		if err := w.wait(ctx, key); err != nil {
			return nil, err
		}
		if e, ok = s.models.tenants.get(key); ok && e.epoch == g.epoch && e.gen == g.tgen {
			return e.m, nil
		}
	}
	if ch := s.preloader.wait(key); ch != nil {
		// A preload runs and will read this tenant next: its batch costs
		// less than this fetch's own build.
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if e, ok = s.models.tenants.get(key); ok && e.epoch == g.epoch && e.gen == g.tgen {
			return e.m, nil
		}
	}
	flight := "t:" + key + "@" + strconv.FormatUint(g.epoch, 10) + ":" + strconv.FormatUint(g.tgen, 10)
	v, err, _ := s.models.flight.Do(flight, func() (any, error) {
		// Detached from this fetch's cancellation: others wait on it.
		m, err := s.updateTenant(context.WithoutCancel(ctx), tenant, e, ok, g)
		if err != nil {
			return nil, err
		}
		s.models.tenants.put(key, tenantEntry{epoch: g.epoch, gen: g.tgen, m: m}, m.weight)
		return m, nil
	})
	var degraded *degradedModel
	if errors.As(err, &degraded) {
		return degraded.m, nil
	}
	if err != nil {
		return nil, err
	}
	return v.(*tenantModel), nil
}

// platformModel returns the platform model valid under g.
func (s *Service) platformModel(ctx context.Context, g gens) (*platformModel, error) {
	if e := s.models.platform.Load(); e != nil && e.epoch == g.epoch && e.gen == g.pgen {
		return e.m, nil
	}
	v, err, _ := s.models.flight.Do("p@"+strconv.FormatUint(g.epoch, 10)+":"+strconv.FormatUint(g.pgen, 10), func() (any, error) {
		stats.platformBuilds.Add(1)
		m, err := s.buildPlatform(context.WithoutCancel(ctx))
		if err != nil {
			return nil, err
		}
		s.models.platform.Store(&platformEntry{epoch: g.epoch, gen: g.pgen, m: m})
		return m, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*platformModel), nil
}

// platformModel is the platform-wide configuration renders read.
type platformModel struct {
	trunks  []dialplan.SIPTrunk
	servers []sofiaconf.Server

	mu     sync.Mutex
	usable map[string][]dialplan.SIPTrunk // by lower-case tenant
	dids   map[string]*dialplan.DID       // by digits; nil: no such DID
}

// maxDIDs bounds the DIDs a platform model remembers; past it the memo
// starts over.
const maxDIDs = 200000

func (s *Service) buildPlatform(ctx context.Context) (*platformModel, error) {
	p := &platformModel{usable: map[string][]dialplan.SIPTrunk{}, dids: map[string]*dialplan.DID{}}
	var err error
	if p.trunks, _, err = s.tables.trunks.query(ctx, s.st.Querier(), "1 = 1"); err != nil {
		return nil, err
	}
	if p.servers, _, err = s.tables.servers.query(ctx, s.st.Querier(), "1 = 1"); err != nil {
		return nil, err
	}
	return p, nil
}

// trunksFor lists the trunks a tenant may use (its own and the shared ones).
func (p *platformModel) trunksFor(tenant string) []dialplan.SIPTrunk {
	key := strings.ToLower(tenant)
	p.mu.Lock()
	defer p.mu.Unlock()
	if ts, ok := p.usable[key]; ok {
		return ts
	}
	ts := []dialplan.SIPTrunk{}
	for _, t := range p.trunks {
		if len(t.Tenants) == 0 || containsFold(t.Tenants, tenant) {
			ts = append(ts, t)
		}
	}
	if len(p.usable) >= maxDIDs {
		p.usable = map[string][]dialplan.SIPTrunk{}
	}
	p.usable[key] = ts
	return ts
}

// did finds a DID by its digits (stored in E.164 with '+'); nil when there
// is none. Answers are remembered for the model's platform generation.
func (s *Service) did(ctx context.Context, p *platformModel, digits string) (*dialplan.DID, error) {
	if digits == "" {
		return nil, nil
	}
	p.mu.Lock()
	d, ok := p.dids[digits]
	p.mu.Unlock()
	if ok {
		return d, nil
	}
	ds, _, err := s.tables.dids.query(ctx, s.st.Querier(), "number = ?", "+"+digits)
	if err != nil {
		return nil, err
	}
	if len(ds) > 0 {
		d = &ds[0]
	}
	p.mu.Lock()
	if len(p.dids) >= maxDIDs {
		p.dids = map[string]*dialplan.DID{}
	}
	p.dids[digits] = d
	p.mu.Unlock()
	return d, nil
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// weightedLRU is a least-recently-used map bounded by the total weight of
// its values (bytes, here) rather than their count: tenants differ in size
// by orders of magnitude. The most recent entry is always kept.
type weightedLRU[V any] struct {
	mu     sync.Mutex
	max    int
	weight int
	order  *list.List // front: most recently used
	items  map[string]*list.Element
}

type lruItem[V any] struct {
	key    string
	val    V
	weight int
}

func newWeightedLRU[V any](max int) *weightedLRU[V] {
	return &weightedLRU[V]{max: max, order: list.New(), items: map[string]*list.Element{}}
}

func (c *weightedLRU[V]) get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*lruItem[V]).val, true
}

func (c *weightedLRU[V]) put(key string, val V, weight int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		it := el.Value.(*lruItem[V])
		c.weight += weight - it.weight
		it.val, it.weight = val, weight
		c.order.MoveToFront(el)
	} else {
		c.items[key] = c.order.PushFront(&lruItem[V]{key: key, val: val, weight: weight})
		c.weight += weight
	}
	for c.weight > c.max && c.order.Len() > 1 {
		el := c.order.Back()
		it := el.Value.(*lruItem[V])
		c.order.Remove(el)
		delete(c.items, it.key)
		c.weight -= it.weight
	}
}

// clear drops every entry.
func (c *weightedLRU[V]) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.order.Init()
	c.items = map[string]*list.Element{}
	c.weight = 0
}

// peek returns key's value without making it the most recently used.
func (c *weightedLRU[V]) peek(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		return el.Value.(*lruItem[V]).val, true
	}
	var zero V
	return zero, false
}

// putIfOlder stores a preloaded tenant model unless the cache already
// holds one at least as new (built on demand meanwhile). A model fetches
// wait for (used) is stored as the most recently used, evicting others as
// put does; any other goes to the back, and only where it fits: it has
// not been used yet, and must not push out models that were. It reports
// whether it was stored.
func (c *weightedLRU[V]) putIfOlder(key string, val tenantEntry, weight int, used bool) bool {
	c.mu.Lock()
	if el, ok := c.items[key]; ok {
		if e, ok := any(el.Value.(*lruItem[V]).val).(tenantEntry); ok && (e.epoch > val.epoch || e.epoch == val.epoch && e.gen >= val.gen) {
			c.mu.Unlock()
			return false
		}
	}
	v, _ := any(val).(V)
	if used {
		c.mu.Unlock()
		c.put(key, v, weight)
		return true
	}
	defer c.mu.Unlock()
	if el, ok := c.items[key]; ok {
		c.weight -= el.Value.(*lruItem[V]).weight
		c.order.Remove(el)
		delete(c.items, key)
	}
	if c.weight+weight > c.max {
		return false
	}
	c.items[key] = c.order.PushBack(&lruItem[V]{key: key, val: v, weight: weight})
	c.weight += weight
	return true
}

// grow adds to the weight of key's entry when it still holds the model
// m (the routing part of a tenant model was read after it was stored).
func (c *weightedLRU[V]) grow(key string, m *tenantModel, delta int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[key]
	if !ok {
		return
	}
	it := el.Value.(*lruItem[V])
	if e, ok := any(it.val).(tenantEntry); !ok || e.m != m {
		return
	}
	it.weight += delta
	c.weight += delta
	for c.weight > c.max && c.order.Len() > 1 {
		back := c.order.Back()
		bi := back.Value.(*lruItem[V])
		c.order.Remove(back)
		delete(c.items, bi.key)
		c.weight -= bi.weight
	}
}

// entries returns the entries, the most recently used first.
func (c *weightedLRU[V]) entries() []lruItem[V] {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]lruItem[V], 0, c.order.Len())
	for el := c.order.Front(); el != nil; el = el.Next() {
		out = append(out, *el.Value.(*lruItem[V]))
	}
	return out
}

// len and size report the entries and their total weight (for stats).
func (c *weightedLRU[V]) stats() (n, weight int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len(), c.weight
}

// Stats are process-wide counters of the XML service, for benchmarks and
// diagnostics.
type Stats struct {
	Fetches, DocHits, Renders, TenantBuilds, TenantPatches, PlatformBuilds int64
	// TenantPreloads counts tenant models read in the background
	// (preload.go) rather than on a fetch's demand.
	TenantPreloads int64
	// PreloadBatches counts the preload's reads (one query per table each).
	PreloadBatches int64
	// Resets counts the times every model was dropped at once (a missed
	// change stream: Redis reconnected or a notification was lost).
	Resets int64
	// Degraded counts models served without the changed extensions
	// because the database was unavailable.
	Degraded int64
	// Unavailable counts fetches answered "not found" because what they
	// needed could not be read (the database was unavailable).
	Unavailable int64
}

var stats struct {
	fetches, docHits, renders, tenantBuilds, tenantPatches, platformBuilds, tenantPreloads, preloadBatches, resets, degraded, unavailable atomic.Int64
}

// ReadStats returns the counters since the process started.
func ReadStats() Stats {
	return Stats{
		Fetches: stats.fetches.Load(), DocHits: stats.docHits.Load(), Renders: stats.renders.Load(),
		TenantBuilds: stats.tenantBuilds.Load(), TenantPatches: stats.tenantPatches.Load(),
		PlatformBuilds: stats.platformBuilds.Load(), TenantPreloads: stats.tenantPreloads.Load(), PreloadBatches: stats.preloadBatches.Load(), Resets: stats.resets.Load(), Degraded: stats.degraded.Load(), Unavailable: stats.unavailable.Load(),
	}
}

// SofiaConf renders, from the database as it is now, the sofia.conf
// external profile that node (a pool node name) loads: the node is found
// by the servers record of that name and rendered for its hostname, as
// its own fetch is; a node without one gets what an unknown node gets.
func (s *Service) SofiaConf(ctx context.Context, node string) ([]byte, error) {
	p, err := s.buildPlatform(ctx)
	if err != nil {
		return nil, err
	}
	req := xmlcurl.Request{Section: "configuration", KeyValue: "sofia.conf", Profile: "external"}
	for _, srv := range p.servers {
		if srv.Name == node && srv.Hostname != "" {
			req.Hostname = srv.Hostname
			break
		}
	}
	return sofiaconf.Sofia(s.opts, req, p.servers, p.trunks), nil
}

// cacheBytes is the memory the cache accounts for: the tenant models'
// weights and the documents' bytes. It stays within the configured bounds
// (Config.ModelBytes + Config.DocBytes), except that the most recently
// used tenant model is kept even when it alone is larger.
func (s *Service) cacheBytes() (tenantModels, docs int) {
	_, tenantModels = s.models.tenants.stats()
	return tenantModels, s.local.size()
}

// HoldsModels reports whether any tenant's model is in memory: while the
// database does not answer, fetches are then still answered for what the
// models prove current (readiness of the XML path).
func (s *Service) HoldsModels() bool {
	n, _ := s.models.tenants.stats()
	return n > 0
}

package fsxml

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/switchboard/switchboard/internal/freeswitch/dialplan"
	"github.com/switchboard/switchboard/internal/models"
)

// Preloading. Right after a restart every phone re-registers and calls
// resume: built one tenant at a time on first use, 1,000 tenants' models
// are about 20,000 indexed queries (4 for the directory part, 16 for the
// routing part), and fetches of the first seconds wait on them. Once
// memory can be trusted (the change notifications are live), the service
// reads every tenant's model in the background instead, a batch of
// tenants at a time with one query per table (tenant_id IN (...)): some
// twenty queries per batch. Fetches never wait for the preload: a tenant
// not loaded yet is built on demand as before, and a model already in the
// cache (built on demand meanwhile) is kept.
//
// A batch is read under the generations current before its queries, as an
// on-demand build is, so a write committed meanwhile moves its tenant's
// generation past the preloaded model, which is then never used.

// preloadBatch bounds one batch: this many tenants, or as many as hold
// this many extensions, whichever comes first. Small enough that a fetch
// waiting for its tenant's batch waits about as long as its own build
// would take, large enough that a thousand tenants are a few dozen
// queries per table at most.
const (
	preloadTenants    = 64
	preloadExtensions = 8000
)

// preloadShare is the part of the model budget the preload fills at most:
// the rest is left to tenants fetched on demand, so a preload of more
// tenants than fit evicts none of them.
const preloadShare = 3 // quarters

// startPreload runs a preload in the background when the configuration
// asks for them: at once, or right after the one running (its batches
// read before a reset are of the old epoch).
func (s *Service) startPreload() {
	if !s.cfg.Preload || s.tables == nil {
		return
	}
	s.preloadAgain.Store(true)
	if !s.preloading.CompareAndSwap(false, true) {
		return
	}
	go func() {
		for s.preloadAgain.Swap(false) && s.life.Err() == nil {
			s.preload(s.life)
		}
		s.preloading.Store(false)
		if s.preloadAgain.Load() {
			s.startPreload()
		}
	}()
}

// preload reads every tenant's model into the cache, in batches, until
// the cache holds preloadShare quarters of its budget.
func (s *Service) preload(ctx context.Context) {
	start := time.Now()
	n, err := s.preloadAll(ctx)
	if ctx.Err() != nil {
		return // closed
	}
	if err != nil {
		s.log.Warn("xml models: preload stopped; the rest are built on first use", "tenants", n, "error", err)
		return
	}
	s.log.Info("xml models preloaded", "tenants", n, "took", time.Since(start).Round(time.Millisecond))
}

func (s *Service) preloadAll(ctx context.Context) (int, error) {
	db := s.st.Querier()
	ts, _, err := s.tables.tenants.query(ctx, db, "1 = 1")
	if err != nil {
		return 0, err
	}
	// Fetches wait for their tenant's batch from here on: the tenant list
	// is all the preloader needs (each batch counts its own extensions),
	// so no fetch of the first moments builds its model alone.
	p := &s.preloader
	p.begin(ts)
	// The tenants fetches wait for are read by a loop of their own, never
	// behind a batch of others.
	demand := make(chan struct{})
	go func() {
		defer close(demand)
		s.preloadWanted(ctx)
	}()
	defer func() {
		p.end()
		<-demand
	}()
	if err := s.preloadPlatform(ctx); err != nil {
		return 0, err
	}
	done := 0
	for {
		if _, weight := s.models.tenants.stats(); weight >= s.models.tenants.max/4*preloadShare {
			return done, nil
		}
		batch := p.next(false)
		if len(batch) == 0 {
			return done, nil
		}
		n, err := s.preloadBatch(ctx, batch, false)
		p.loaded(batch)
		done += n
		if err != nil {
			return done, err
		}
	}
}

// preloadWanted reads the tenants fetches wait for, as they ask, until
// the preload ends.
func (s *Service) preloadWanted(ctx context.Context) {
	p := &s.preloader
	for {
		select {
		case <-p.kick:
		case <-p.quit:
			return
		}
		for {
			batch := p.next(true)
			if len(batch) == 0 {
				break
			}
			_, err := s.preloadBatch(ctx, batch, true)
			p.loaded(batch)
			if err != nil {
				// Its fetches build their models themselves.
				s.log.Warn("xml models: a preload batch failed", "tenants", len(batch), "error", err)
			}
		}
	}
}

// preloader hands the tenants fetches ask for while a preload runs to its
// next batch, ahead of the others, and lets those fetches wait for that
// batch instead of reading the same rows themselves: right after a
// restart every tenant asked for is read by the preload, some twenty
// queries per batch, not per tenant.
type preloader struct {
	mu     sync.Mutex
	rows   []tenantRow
	left   map[string]int // tenants not read yet, by key: their index in rows; nil when no preload runs
	cursor int            // rows before it were read or taken
	wanted []string       // keys fetches asked for, oldest first
	// done holds, per tenant asked for or in the batch being read, a
	// channel closed once its batch was stored.
	done map[string]chan struct{}
	// kick tells the demand loop a tenant was asked for; quit ends it.
	kick chan struct{}
	quit chan struct{}
}

func (p *preloader) begin(rows []tenantRow) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rows, p.cursor, p.wanted = rows, 0, nil
	p.left = make(map[string]int, len(rows))
	p.done = map[string]chan struct{}{}
	p.kick, p.quit = make(chan struct{}, 1), make(chan struct{})
	for i := range rows {
		p.left[lowerASCII(rows[i].Tenant.Tenant)] = i
	}
}

// end releases every fetch still waiting: they build their models on
// demand.
func (p *preloader) end() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, ch := range p.done {
		close(ch)
	}
	close(p.quit)
	p.rows, p.left, p.done, p.wanted = nil, nil, nil, nil
}

// next takes the next batch, up to preloadTenants: the tenants fetches
// asked for (wanted), or the others in order. (preloadBatch splits a
// batch holding more than preloadExtensions extensions.)
func (p *preloader) next(wanted bool) []tenantRow {
	p.mu.Lock()
	defer p.mu.Unlock()
	var batch []tenantRow
	take := func(key string) {
		i, ok := p.left[key]
		if !ok {
			return
		}
		delete(p.left, key)
		if p.done[key] == nil {
			p.done[key] = make(chan struct{})
		}
		batch = append(batch, p.rows[i])
	}
	for wanted && len(p.wanted) > 0 && len(batch) < preloadTenants {
		take(p.wanted[0])
		p.wanted = p.wanted[1:]
	}
	for !wanted && p.cursor < len(p.rows) && len(batch) < preloadTenants {
		take(lowerASCII(p.rows[p.cursor].Tenant.Tenant))
		p.cursor++
	}
	return batch
}

// loaded releases the fetches waiting for batch.
func (p *preloader) loaded(batch []tenantRow) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range batch {
		p.releaseLocked(lowerASCII(batch[i].Tenant.Tenant))
	}
}

// release releases the fetches waiting for key's model.
func (p *preloader) release(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.releaseLocked(key)
}

func (p *preloader) releaseLocked(key string) {
	if ch := p.done[key]; ch != nil {
		close(ch)
		delete(p.done, key)
	}
}

// wait returns a channel closed once the running preload stored key's
// model (or gave up), and asks for it to be read next; nil when no
// preload will read it.
func (p *preloader) wait(key string) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.left == nil {
		return nil
	}
	if ch := p.done[key]; ch != nil {
		return ch
	}
	if _, ok := p.left[key]; !ok {
		return nil
	}
	ch := make(chan struct{})
	p.done[key] = ch
	p.wanted = append(p.wanted, key)
	select {
	case p.kick <- struct{}{}:
	default: // the demand loop has a kick pending
	}
	return ch
}

// preloadPlatform builds the platform model and remembers every DID in
// it, so the first call to each DID reads nothing.
func (s *Service) preloadPlatform(ctx context.Context) error {
	if s.cfg.preloadHook != nil {
		s.cfg.preloadHook(ctx)
	}
	p, err := s.platformModel(ctx, s.gens.current(""))
	if err != nil {
		return err
	}
	ds, _, err := s.tables.dids.query(ctx, s.st.Querier(), "1 = 1")
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range ds {
		digits, ok := strings.CutPrefix(ds[i].Number, "+")
		if !ok || len(p.dids) >= maxDIDs {
			continue
		}
		if _, had := p.dids[digits]; !had {
			p.dids[digits] = &ds[i]
		}
	}
	return nil
}

// preloadBatch reads the models of the tenants ts (those the cache does
// not hold already) with one query per table and stores them (as used
// when fetches wait for them, else as not used yet). Tenants holding more
// than preloadExtensions extensions together are read in parts, each
// part's fetches released once it is stored. It returns the models
// stored.
func (s *Service) preloadBatch(ctx context.Context, ts []tenantRow, wanted bool) (int, error) {
	stats.preloadBatches.Add(1)
	var todo []pendingModel
	var ids []int64
	for i := range ts {
		key := lowerASCII(ts[i].Tenant.Tenant)
		g := s.gens.current(key)
		if e, ok := s.models.tenants.peek(key); ok && e.epoch == g.epoch && e.gen >= g.tgen {
			continue
		}
		todo = append(todo, pendingModel{row: &ts[i], key: key, g: g})
		ids = append(ids, ts[i].ID)
	}
	if len(todo) == 0 {
		return 0, nil
	}
	counts, err := s.extensionCounts(ctx, ids, wanted)
	if err != nil {
		return 0, err
	}
	stored := 0
	for len(todo) > 0 {
		part, held := 0, 0
		for ; part < len(todo); part++ {
			n := counts[todo[part].row.ID]
			if n > s.modelExtensions {
				continue // its extensions are not read
			}
			if part > 0 && held+n > preloadExtensions {
				break
			}
			held += n
		}
		n, err := s.preloadPart(ctx, todo[:part], counts, wanted)
		stored += n
		if err != nil {
			return stored, err
		}
		for _, p := range todo[:part] {
			s.preloader.release(p.key)
		}
		todo = todo[part:]
	}
	return stored, nil
}

// pendingModel is a tenant a preload batch reads, with the generations
// current before its queries.
type pendingModel struct {
	row *tenantRow
	key string
	g   gens
}

// extensionCounts counts the extensions of the tenants ids, in one
// query under a preload slot.
func (s *Service) extensionCounts(ctx context.Context, ids []int64, wanted bool) (map[int64]int, error) {
	release := s.preloadSlots.acquire(wanted)
	defer release()
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	var counts []struct {
		Tenant int64 `db:"tenant_id"`
		N      int   `db:"n"`
	}
	q := "SELECT tenant_id, COUNT(*) AS n FROM extensions WHERE tenant_id IN (?" + strings.Repeat(",?", len(ids)-1) + ") GROUP BY tenant_id"
	if err := s.st.Querier().SelectContext(ctx, &counts, q, args...); err != nil {
		return nil, fmt.Errorf("count extensions: %w", err)
	}
	out := make(map[int64]int, len(counts))
	for _, c := range counts {
		out[c.Tenant] = c.N
	}
	return out, nil
}

// preloadPart reads and stores the models of todo, whose extension
// counts are exts, with one query per table.
func (s *Service) preloadPart(ctx context.Context, todo []pendingModel, exts map[int64]int, wanted bool) (int, error) {
	var ids, small []int64
	for _, p := range todo {
		ids = append(ids, p.row.ID)
		if exts[p.row.ID] <= s.modelExtensions {
			small = append(small, p.row.ID)
		}
	}
	db, t := s.st.Querier(), s.tables
	var r bulkRows
	g, gctx := errgroup.WithContext(ctx)
	slots := func() func() { return s.preloadSlots.acquire(wanted) }
	bulk(g, gctx, db, slots, t.extensions, small, &r.extensions)
	bulk(g, gctx, db, slots, t.emergency, ids, &r.emergency)
	bulk(g, gctx, db, slots, t.mailboxes, ids, &r.mailboxes)
	bulk(g, gctx, db, slots, t.moh, ids, &r.moh)
	bulk(g, gctx, db, slots, t.inbound, ids, &r.inbound)
	bulk(g, gctx, db, slots, t.outbound, ids, &r.outbound)
	bulk(g, gctx, db, slots, t.schedules, ids, &r.schedules)
	bulk(g, gctx, db, slots, t.conditions, ids, &r.conditions)
	bulk(g, gctx, db, slots, t.features, ids, &r.features)
	bulk(g, gctx, db, slots, t.prompts, ids, &r.prompts)
	bulk(g, gctx, db, slots, t.hunts, ids, &r.hunts)
	bulk(g, gctx, db, slots, t.rooms, ids, &r.rooms)
	bulk(g, gctx, db, slots, t.menus, ids, &r.menus)
	bulk(g, gctx, db, slots, t.queues, ids, &r.queues)
	bulk(g, gctx, db, slots, t.agents, ids, &r.agents)
	bulk(g, gctx, db, slots, t.pickups, ids, &r.pickups)
	bulk(g, gctx, db, slots, t.endpoints, ids, &r.endpoints)
	bulk(g, gctx, db, slots, t.directory, ids, &r.directory)
	bulk(g, gctx, db, slots, t.officeMode, ids, &r.officeMode)
	if err := g.Wait(); err != nil {
		return 0, err
	}
	stored := 0
	for _, p := range todo {
		m := r.model(p.row, exts[p.row.ID] <= s.modelExtensions)
		if s.models.tenants.putIfOlder(p.key, tenantEntry{epoch: p.g.epoch, gen: p.g.tgen, m: m}, m.weight, wanted) {
			stored++
		}
	}
	stats.tenantPreloads.Add(int64(stored))
	return stored, nil
}

// grouped are one table's rows of a batch by tenant id, with their bytes.
type grouped[T any] struct {
	rows  map[int64][]T
	bytes map[int64]int
}

func (g grouped[T]) of(id int64) ([]T, int) { return g.rows[id], g.bytes[id] }

// bulk starts reading table's rows of the tenants ids into out.
// Its query holds one of the preload slots (slot takes it and returns its
// release) while it runs: both preload loops share them, so the preload
// never takes every pooled connection from the API and the change poll.
func bulk[T any](g *errgroup.Group, ctx context.Context, db models.Querier, slot func() func(), table *table[T], ids []int64, out *grouped[T]) {
	g.Go(func() (err error) {
		defer slot()()
		out.rows, out.bytes, err = table.byTenants(ctx, db, ids)
		return err
	})
}

// bulkRows are a batch's rows of every table a tenant model reads.
type bulkRows struct {
	extensions grouped[dialplan.Extension]
	emergency  grouped[dialplan.EmergencyLocation]
	mailboxes  grouped[dialplan.SpecialMailbox]
	moh        grouped[dialplan.MusicOnHold]
	inbound    grouped[dialplan.InboundRoute]
	outbound   grouped[dialplan.OutboundRoute]
	schedules  grouped[dialplan.Schedule]
	conditions grouped[dialplan.RoutingCondition]
	features   grouped[dialplan.FeatureExtension]
	prompts    grouped[dialplan.VoicePrompt]
	hunts      grouped[dialplan.HuntGroup]
	rooms      grouped[dialplan.ConferenceRoom]
	menus      grouped[dialplan.IVRMenu]
	queues     grouped[dialplan.Queue]
	agents     grouped[dialplan.Agent]
	pickups    grouped[dialplan.PickupGroup]
	endpoints  grouped[dialplan.SpecialEndpoint]
	directory  grouped[dialplan.CompanyDirectory]
	officeMode grouped[dialplan.OfficeMode]
}

// model assembles one tenant's model, both parts, from a batch's rows as
// buildTenant and routingSnapshot would have read them; holdsExts is
// false for a tenant with more extensions than a model holds.
func (r *bulkRows) model(row *tenantRow, holdsExts bool) *tenantModel {
	id := row.ID
	m := &tenantModel{id: id, allExtensions: holdsExts}
	snap := &dialplan.TenantSnapshot{Tenant: row.Tenant}
	var w [20]int
	var exts []dialplan.Extension
	if holdsExts {
		exts, w[0] = r.extensions.of(id)
		snap.Extensions = exts
	}
	snap.EmergencyLocations, w[1] = r.emergency.of(id)
	snap.SpecialMailboxes, w[2] = r.mailboxes.of(id)
	moh, mohWeight := r.moh.of(id)
	if needsMOHClasses(snap.Tenant, exts, holdsExts) {
		snap.MusicOnHold = moh
		w[3] = mohWeight
	}
	snap.Prepare()
	if holdsExts {
		w[0] = snap.ExtensionBytes() // what the model holds of them, packed
	}
	full := &dialplan.TenantSnapshot{Tenant: snap.Tenant, Extensions: snap.Extensions,
		EmergencyLocations: snap.EmergencyLocations, SpecialMailboxes: snap.SpecialMailboxes, MusicOnHold: moh}
	full.InboundRoutes, w[4] = r.inbound.of(id)
	full.OutboundRoutes, w[5] = r.outbound.of(id)
	full.Schedules, w[6] = r.schedules.of(id)
	full.RoutingConditions, w[7] = r.conditions.of(id)
	full.FeatureExtensions, w[8] = r.features.of(id)
	full.VoicePrompts, w[9] = r.prompts.of(id)
	full.HuntGroups, w[10] = r.hunts.of(id)
	full.ConferenceRooms, w[11] = r.rooms.of(id)
	full.IVRMenus, w[12] = r.menus.of(id)
	full.Queues, w[13] = r.queues.of(id)
	full.Agents, w[14] = r.agents.of(id)
	full.PickupGroups, w[15] = r.pickups.of(id)
	full.SpecialEndpoints, w[16] = r.endpoints.of(id)
	w[17] = mohWeight
	if cd, n := r.directory.of(id); len(cd) > 0 {
		full.CompanyDirectory, w[18] = &cd[0], n
	}
	if om, n := r.officeMode.of(id); len(om) > 0 {
		full.OfficeMode, w[19] = &om[0], n
	}
	full.Prepare()
	full.ShareIndex(snap)
	m.snap = snap
	m.routing.Store(full)
	m.weight, m.extWeight = 1, w[0]
	for _, n := range w {
		m.weight += n
	}
	return m
}

// preloadSlots bound the preload's queries running at once. The
// background loop's take at most half the pooled connections, so the API
// and the change poll keep theirs; the queries of the batches fetches
// wait for may take one more than half, and take the next free slot
// before any of the background's: a fetch waits for its own batch's
// queries, not for a queue of the background's.
type preloadSlots struct {
	mu           sync.Mutex
	max, maxRest int // slots in all, and for the background
	used, rest   int // taken in all, and by the background
	// Waiters, oldest first: urgent ones (batches fetches wait for), and
	// the background's.
	urgentWait, restWait []chan struct{}
}

// newPreloadSlots bounds the preload's queries for a pool of conns
// connections.
func newPreloadSlots(conns int) *preloadSlots {
	rest := max(conns/2, 1)
	return &preloadSlots{max: min(rest+1, max(conns-1, 1)), maxRest: rest}
}

// acquire takes a slot (first in line when urgent) and returns its
// release.
func (q *preloadSlots) acquire(urgent bool) func() {
	q.mu.Lock()
	if q.free(urgent) && (urgent || len(q.urgentWait) == 0) {
		q.take(urgent)
		q.mu.Unlock()
	} else {
		ch := make(chan struct{})
		if urgent {
			q.urgentWait = append(q.urgentWait, ch)
		} else {
			q.restWait = append(q.restWait, ch)
		}
		q.mu.Unlock()
		<-ch // the slot was taken for us by release
	}
	if urgent {
		return q.releaseUrgent
	}
	return q.releaseRest
}

func (q *preloadSlots) free(urgent bool) bool {
	return q.used < q.max && (urgent || q.rest < q.maxRest)
}

func (q *preloadSlots) take(urgent bool) {
	q.used++
	if !urgent {
		q.rest++
	}
}

func (q *preloadSlots) releaseUrgent() { q.release(true) }
func (q *preloadSlots) releaseRest()   { q.release(false) }

// release frees a slot and hands what is free to the oldest urgent
// waiters, then to the oldest others.
func (q *preloadSlots) release(urgent bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.used--
	if !urgent {
		q.rest--
	}
	for len(q.urgentWait) > 0 && q.free(true) {
		q.take(true)
		close(q.urgentWait[0])
		q.urgentWait = q.urgentWait[1:]
	}
	for len(q.urgentWait) == 0 && len(q.restWait) > 0 && q.free(false) {
		q.take(false)
		close(q.restWait[0])
		q.restWait = q.restWait[1:]
	}
}

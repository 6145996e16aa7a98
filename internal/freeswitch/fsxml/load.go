package fsxml

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/switchboard/switchboard/internal/freeswitch/dialplan"
	"github.com/switchboard/switchboard/internal/freeswitch/gateways/sofiaconf"
	"github.com/switchboard/switchboard/internal/models"
)

// tenantRow is a tenant with the id its configuration rows refer to.
type tenantRow struct {
	ID int64 `json:"id"`
	dialplan.Tenant
}

// tables are the typed loaders of every resource the renderer reads, one
// per dialplan type, each derived from the registry (scan.go).
type tables struct {
	tenants    *table[tenantRow]
	extensions *table[dialplan.Extension]
	inbound    *table[dialplan.InboundRoute]
	outbound   *table[dialplan.OutboundRoute]
	schedules  *table[dialplan.Schedule]
	conditions *table[dialplan.RoutingCondition]
	features   *table[dialplan.FeatureExtension]
	officeMode *table[dialplan.OfficeMode]
	emergency  *table[dialplan.EmergencyLocation]
	mailboxes  *table[dialplan.SpecialMailbox]
	prompts    *table[dialplan.VoicePrompt]
	hunts      *table[dialplan.HuntGroup]
	rooms      *table[dialplan.ConferenceRoom]
	menus      *table[dialplan.IVRMenu]
	queues     *table[dialplan.Queue]
	agents     *table[dialplan.Agent]
	moh        *table[dialplan.MusicOnHold]
	directory  *table[dialplan.CompanyDirectory]
	pickups    *table[dialplan.PickupGroup]
	endpoints  *table[dialplan.SpecialEndpoint]
	dids       *table[dialplan.DID]
	trunks     *table[dialplan.SIPTrunk]
	servers    *table[sofiaconf.Server]
}

// newTables checks every renderer type against the registry; an error
// names the type, field and registry declaration that do not fit.
func newTables(reg *models.Registry, sealer *models.Sealer) (*tables, error) {
	var t tables
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	var err error
	t.tenants, err = newTable[tenantRow](reg, sealer, "tenants")
	add(err)
	t.extensions, err = newTable[dialplan.Extension](reg, sealer, "extensions")
	add(err)
	t.inbound, err = newTable[dialplan.InboundRoute](reg, sealer, "inbound_routes")
	add(err)
	t.outbound, err = newTable[dialplan.OutboundRoute](reg, sealer, "outbound_routes")
	add(err)
	t.schedules, err = newTable[dialplan.Schedule](reg, sealer, "schedules")
	add(err)
	t.conditions, err = newTable[dialplan.RoutingCondition](reg, sealer, "routing_conditions")
	add(err)
	t.features, err = newTable[dialplan.FeatureExtension](reg, sealer, "feature_extensions")
	add(err)
	t.officeMode, err = newTable[dialplan.OfficeMode](reg, sealer, "office_mode")
	add(err)
	t.emergency, err = newTable[dialplan.EmergencyLocation](reg, sealer, "emergency_locations")
	add(err)
	t.mailboxes, err = newTable[dialplan.SpecialMailbox](reg, sealer, "special_mailboxes")
	add(err)
	t.prompts, err = newTable[dialplan.VoicePrompt](reg, sealer, "voice_prompts")
	add(err)
	t.hunts, err = newTable[dialplan.HuntGroup](reg, sealer, "hunt_groups")
	add(err)
	t.rooms, err = newTable[dialplan.ConferenceRoom](reg, sealer, "conference_rooms")
	add(err)
	t.menus, err = newTable[dialplan.IVRMenu](reg, sealer, "ivr_menus")
	add(err)
	t.queues, err = newTable[dialplan.Queue](reg, sealer, "queues")
	add(err)
	t.agents, err = newTable[dialplan.Agent](reg, sealer, "agents")
	add(err)
	t.moh, err = newTable[dialplan.MusicOnHold](reg, sealer, "music_on_hold")
	add(err)
	t.directory, err = newTable[dialplan.CompanyDirectory](reg, sealer, "company_directory_settings")
	add(err)
	t.pickups, err = newTable[dialplan.PickupGroup](reg, sealer, "pickup_groups")
	add(err)
	t.endpoints, err = newTable[dialplan.SpecialEndpoint](reg, sealer, "special_endpoints")
	add(err)
	t.dids, err = newTable[dialplan.DID](reg, sealer, "dids")
	add(err)
	t.trunks, err = newTable[dialplan.SIPTrunk](reg, sealer, "sip_trunks")
	add(err)
	t.servers, err = newTable[sofiaconf.Server](reg, sealer, "servers")
	add(err)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("renderer/registry contract: %w", err)
	}
	return &t, nil
}

func (t *tables) close() {
	t.tenants.close()
	t.extensions.close()
	t.inbound.close()
	t.outbound.close()
	t.schedules.close()
	t.conditions.close()
	t.features.close()
	t.officeMode.close()
	t.emergency.close()
	t.mailboxes.close()
	t.prompts.close()
	t.hunts.close()
	t.rooms.close()
	t.menus.close()
	t.queues.close()
	t.agents.close()
	t.moh.close()
	t.directory.close()
	t.pickups.close()
	t.endpoints.close()
	t.dids.close()
	t.trunks.close()
	t.servers.close()
}

// defaultModelExtensions bounds how many extensions a tenant model holds
// (Service.modelExtensions); a larger tenant's extensions are read per
// fetch (only the ones it involves, in one query).
const defaultModelExtensions = 2000

// tenantModel is one tenant's configuration, prepared for shared use, in
// two parts read separately: what directory fetches need (the tenant, its
// extensions, emergency locations and special mailboxes), read when the
// model is built, and the routing part (routes, conditions, schedules,
// office mode, feature codes, prompts, hunt groups, conference rooms, IVR menus, queues, agents, music-on-hold classes,
// pickup groups, special endpoints), read by the first dialplan fetch
// that needs it. So a registration after a write, or a registration storm,
// reads four resources per tenant, not seventeen. A nil snap means no such
// tenant.
type tenantModel struct {
	id   int64
	snap *dialplan.TenantSnapshot // the directory part
	// allExtensions is false when the tenant had more than
	// Service.modelExtensions: snap.Extensions is then empty and renders load
	// the extensions they involve.
	allExtensions bool
	// degraded marks a model served while the database was unavailable,
	// without the extensions changed since (never cached).
	degraded  bool
	weight    int
	extWeight int // of weight, the bytes the extensions' rows took

	mu      sync.Mutex // held while the routing part is read
	routing atomic.Pointer[dialplan.TenantSnapshot]
}

// reader runs a model's queries concurrently (each on its own pooled
// connection): on MySQL a fetch waits for the slowest query, not for their
// sum. On SQLite, in-process and CPU-bound with a pool of four connections,
// more than two at once only queues.
func (s *Service) reader(ctx context.Context) (*errgroup.Group, context.Context) {
	g, gctx := errgroup.WithContext(ctx)
	if s.st.Dialect().SQLite {
		g.SetLimit(2)
	}
	return g, gctx
}

const byTenant = "tenant_id = ?"

// buildTenant reads a tenant's model (its directory part): the tenant row,
// then its extensions, emergency locations and special mailboxes, each by
// an indexed query.
func (s *Service) buildTenant(ctx context.Context, name string) (*tenantModel, error) {
	m := &tenantModel{weight: 1}
	if name == "" {
		return m, nil
	}
	defer s.buildSlot(ctx, name)()
	db, t := s.st.Querier(), s.tables
	// All four in one round of concurrent queries: the tenant's rows are
	// selected by its name through the tenants key, not by an id read first.
	const ofTenant = "tenant_id = (SELECT id FROM tenants WHERE tenant = ?)"
	var ts []tenantRow
	snap := &dialplan.TenantSnapshot{}
	var weights [3]int
	var exts []dialplan.Extension
	g, gctx := s.reader(ctx)
	g.Go(func() (err error) {
		ts, _, err = t.tenants.query(gctx, db, "tenant = ?", name)
		return err
	})
	g.Go(func() (err error) {
		exts, weights[0], err = t.extensions.queryLimit(gctx, db, ofTenant, s.modelExtensions+1, name)
		return err
	})
	g.Go(func() (err error) {
		snap.EmergencyLocations, weights[1], err = t.emergency.query(gctx, db, ofTenant, name)
		return err
	})
	g.Go(func() (err error) {
		snap.SpecialMailboxes, weights[2], err = t.mailboxes.query(gctx, db, ofTenant, name)
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if len(ts) == 0 {
		return m, nil
	}
	m.id, snap.Tenant = ts[0].ID, ts[0].Tenant
	if len(exts) <= s.modelExtensions {
		snap.Extensions, m.allExtensions = exts, true
	} else {
		weights[0] = 0
	}
	mohWeight := 0
	if needsMOHClasses(snap.Tenant, exts, m.allExtensions) {
		// Directory users carry their hold music (the extension's or the
		// tenant's class by name): read the classes, but only for tenants
		// that name one, so other registrations still read four resources.
		var err error
		if snap.MusicOnHold, mohWeight, err = t.moh.query(ctx, db, byTenant, m.id); err != nil {
			return nil, err
		}
	}
	snap.Prepare()
	if m.allExtensions {
		// What the model holds of them, packed, rather than the rows read.
		weights[0] = snap.ExtensionBytes()
	}
	m.snap, m.weight, m.extWeight = snap, 1+weights[0]+weights[1]+weights[2]+mohWeight, weights[0]
	return m, nil
}

// needsMOHClasses reports whether a tenant's directory part must hold its
// music-on-hold classes: the tenant or one of its extensions names one
// (or its extensions are not held, and are read per fetch).
func needsMOHClasses(t dialplan.Tenant, exts []dialplan.Extension, all bool) bool {
	if t.MOHClassID != 0 || !all {
		return true
	}
	for i := range exts {
		if exts[i].MOHClassID != 0 {
			return true
		}
	}
	return false
}

// updateTenant returns tenant's model for the generations g: the previous
// model (old, when had) with only the changed extensions read again when
// every change since it was built touched only named extensions, else a
// model read afresh. A directory write thus costs its next fetch one
// indexed query for one extension, not the tenant's whole directory part.
func (s *Service) updateTenant(ctx context.Context, tenant string, old tenantEntry, had bool, g gens) (*tenantModel, error) {
	if had && old.epoch == g.epoch && old.m.snap != nil {
		if names, ok := s.gens.extensionsChanged(g.tenant, old.gen, g.tgen); ok {
			stats.tenantPatches.Add(1)
			m, err := s.patchExtensions(ctx, old.m, names)
			if errors.Is(err, models.ErrUnavailable) && old.m.allExtensions {
				// The database is down, but all that changed since the
				// model are these extensions: everything else in it is
				// still current. Served without them (they answer "not
				// found") and not kept, so the patch runs again once the
				// database answers.
				stats.degraded.Add(1)
				d := s.mergeExtensions(old.m, names, nil)
				d.degraded = true
				return nil, &degradedModel{m: d}
			}
			return m, err
		}
	}
	stats.tenantBuilds.Add(1)
	return s.buildTenant(ctx, tenant)
}

// patchExtensions is m with the named extensions read again: each one kept
// in its place when it still exists, dropped when it does not, added at
// the end when it is new (as ORDER BY id would place it).
func (s *Service) patchExtensions(ctx context.Context, m *tenantModel, names []string) (*tenantModel, error) {
	if !m.allExtensions {
		// The model holds no extensions: renders read them per fetch.
		n := &tenantModel{id: m.id, allExtensions: m.allExtensions, weight: m.weight, extWeight: m.extWeight}
		n.snap = m.snap
		n.routing.Store(m.routing.Load())
		return n, nil
	}
	fresh, _, err := s.extensionsNamed(ctx, m, names...)
	if err != nil {
		return nil, err
	}
	if m.snap.MusicOnHold == nil && needsMOHClasses(m.snap.Tenant, fresh, true) {
		// An extension now names a class the model did not read.
		return s.buildTenant(ctx, m.snap.Tenant.Tenant)
	}
	n := s.mergeExtensions(m, names, fresh)
	if n.snap.ExtensionCount() > s.modelExtensions {
		// Grown past what a model holds: read it as a large tenant.
		return s.buildTenant(ctx, m.snap.Tenant.Tenant)
	}
	return n, nil
}

// mergeExtensions is m with the named extensions replaced by fresh (the
// rows read again): each kept in its place when it still
// exists, dropped when it does not (or was not read: fresh nil), added at
// the end when it is new.
func (s *Service) mergeExtensions(m *tenantModel, names []string, fresh []dialplan.Extension) *tenantModel {
	n := &tenantModel{id: m.id, allExtensions: m.allExtensions, weight: m.weight, extWeight: m.extWeight}
	changed := make(map[string]*dialplan.Extension, len(names))
	for _, name := range names {
		changed[name] = nil
	}
	for i := range fresh {
		changed[fresh[i].Name] = &fresh[i]
	}
	old := m.snap.ExtensionList()
	exts := make([]dialplan.Extension, 0, len(old)+len(fresh))
	for i := range old {
		x, ok := changed[old[i].Name]
		switch {
		case !ok:
			exts = append(exts, old[i])
		case x != nil:
			exts = append(exts, *x)
			delete(changed, x.Name)
		}
	}
	for i := range fresh {
		if changed[fresh[i].Name] == &fresh[i] { // not placed yet: new
			exts = append(exts, fresh[i])
		}
	}
	n.snap = m.snap.WithExtensions(exts)
	n.extWeight = n.snap.ExtensionBytes()
	n.weight = m.weight - m.extWeight + n.extWeight
	if r := m.routing.Load(); r != nil {
		n.routing.Store(r.WithExtensionsOf(n.snap))
	}
	return n
}

// degradedModel carries a model served while the database is unavailable
// (see updateTenant): current in what it holds, and not to be kept.
type degradedModel struct{ m *tenantModel }

func (e *degradedModel) Error() string { return "tenant model served without a database" }
func (e *degradedModel) Unwrap() error { return models.ErrUnavailable }

// routingSnapshot returns the tenant's full snapshot (directory and
// routing parts), reading the routing part on first use. The bytes read
// are returned too (0 when it was already there).
func (s *Service) routingSnapshot(ctx context.Context, m *tenantModel) (*dialplan.TenantSnapshot, int, error) {
	if r := m.routing.Load(); r != nil {
		return r, 0, nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.routing.Load(); r != nil {
		return r, 0, nil
	}
	defer s.buildSlot(ctx, m.snap.Tenant.Tenant)()
	db, t, id := s.st.Querier(), s.tables, m.id
	full := &dialplan.TenantSnapshot{Tenant: m.snap.Tenant, Extensions: m.snap.Extensions,
		EmergencyLocations: m.snap.EmergencyLocations, SpecialMailboxes: m.snap.SpecialMailboxes}
	var weights [16]int
	g, gctx := s.reader(ctx)
	g.Go(func() (err error) {
		full.InboundRoutes, weights[0], err = t.inbound.query(gctx, db, byTenant, id)
		return
	})
	g.Go(func() (err error) {
		full.OutboundRoutes, weights[1], err = t.outbound.query(gctx, db, byTenant, id)
		return
	})
	g.Go(func() (err error) {
		full.Schedules, weights[2], err = t.schedules.query(gctx, db, byTenant, id)
		return
	})
	g.Go(func() (err error) {
		full.RoutingConditions, weights[3], err = t.conditions.query(gctx, db, byTenant, id)
		return
	})
	g.Go(func() (err error) {
		full.FeatureExtensions, weights[4], err = t.features.query(gctx, db, byTenant, id)
		return
	})
	g.Go(func() (err error) {
		full.VoicePrompts, weights[5], err = t.prompts.query(gctx, db, byTenant, id)
		return
	})
	g.Go(func() (err error) {
		full.HuntGroups, weights[7], err = t.hunts.query(gctx, db, byTenant, id)
		return
	})
	g.Go(func() (err error) {
		full.ConferenceRooms, weights[8], err = t.rooms.query(gctx, db, byTenant, id)
		return
	})
	g.Go(func() (err error) {
		full.IVRMenus, weights[9], err = t.menus.query(gctx, db, byTenant, id)
		return
	})
	g.Go(func() (err error) {
		full.Queues, weights[10], err = t.queues.query(gctx, db, byTenant, id)
		return
	})
	g.Go(func() (err error) {
		full.Agents, weights[11], err = t.agents.query(gctx, db, byTenant, id)
		return
	})
	g.Go(func() (err error) {
		full.MusicOnHold, weights[12], err = t.moh.query(gctx, db, byTenant, id)
		return
	})
	g.Go(func() (err error) {
		full.PickupGroups, weights[14], err = t.pickups.query(gctx, db, byTenant, id)
		return
	})
	g.Go(func() (err error) {
		full.SpecialEndpoints, weights[15], err = t.endpoints.query(gctx, db, byTenant, id)
		return
	})
	g.Go(func() error {
		cd, n, err := t.directory.query(gctx, db, byTenant, id)
		if len(cd) > 0 {
			full.CompanyDirectory = &cd[0]
		}
		weights[13] = n
		return err
	})
	g.Go(func() error {
		om, n, err := t.officeMode.query(gctx, db, byTenant, id)
		if len(om) > 0 {
			full.OfficeMode = &om[0]
		}
		weights[6] = n
		return err
	})
	if err := g.Wait(); err != nil {
		return nil, 0, err
	}
	full.Prepare()
	full.ShareIndex(m.snap)
	m.routing.Store(full)
	w := 0
	for _, n := range weights {
		w += n
	}
	return full, w, nil
}

// extensionsFor returns the named extensions of a tenant whose model does
// not hold them, in one indexed query.
func (s *Service) extensionsFor(ctx context.Context, m *tenantModel, names ...string) ([]dialplan.Extension, error) {
	xs, _, err := s.extensionsNamed(ctx, m, names...)
	return xs, err
}

// extensionsNamed reads the named extensions of m's tenant in one indexed
// query, with the bytes their rows took.
func (s *Service) extensionsNamed(ctx context.Context, m *tenantModel, names ...string) ([]dialplan.Extension, int, error) {
	seen := map[string]bool{}
	var args []any
	args = append(args, m.id)
	for _, n := range names {
		if n != "" && !seen[n] {
			seen[n] = true
			args = append(args, n)
		}
	}
	if len(args) == 1 {
		return []dialplan.Extension{}, 0, nil
	}
	xs, size, err := s.tables.extensions.query(ctx, s.st.Querier(), "tenant_id = ? AND name IN (?"+strings.Repeat(",?", len(args)-2)+")", args...)
	if xs == nil {
		xs = []dialplan.Extension{}
	}
	return xs, size, err
}

// snapshot is the tenant's snapshot for one render: the model's directory
// part, or with routing the full one, with the platform's trunks this
// tenant may use (p nil: none) and, for a tenant too large to hold, the
// extensions the render involves (names nil: all). nil for an unknown
// tenant.
func (s *Service) snapshot(ctx context.Context, m *tenantModel, p *platformModel, routing bool, names ...string) (*dialplan.TenantSnapshot, error) {
	if m.snap == nil {
		return nil, nil
	}
	snap := m.snap
	if routing {
		full, grew, err := s.routingSnapshot(ctx, m)
		if err != nil {
			return nil, err
		}
		if grew > 0 {
			s.models.tenants.grow(strings.ToLower(m.snap.Tenant.Tenant), m, grew)
		}
		snap = full
	}
	var exts []dialplan.Extension
	if !m.allExtensions {
		var err error
		if names == nil {
			exts, _, err = s.tables.extensions.query(ctx, s.st.Querier(), "tenant_id = ?", m.id)
		} else {
			exts, err = s.extensionsFor(ctx, m, names...)
		}
		if err != nil {
			return nil, err
		}
		if exts == nil {
			exts = []dialplan.Extension{}
		}
	}
	var trunks []dialplan.SIPTrunk
	if p != nil {
		trunks = p.trunksFor(m.snap.Tenant.Tenant)
	}
	return snap.Bind(trunks, exts), nil
}

// UserVariables returns the channel variables the directory gives tenant's
// extension ext (dialplan.UserVariables), for calls Switchboard places on
// that user's behalf; models.ErrNotFound when there is no such extension.
func (s *Service) UserVariables(ctx context.Context, tenant, ext string) ([][2]string, error) {
	src := &source{s: s, fresh: true}
	m, err := src.tenant(ctx, tenant)
	if err != nil {
		return nil, fmt.Errorf("user variables %s@%s: %w", ext, tenant, err)
	}
	snap, err := s.snapshot(ctx, m, nil, false, ext)
	if err != nil {
		return nil, fmt.Errorf("user variables %s@%s: %w", ext, tenant, err)
	}
	if snap != nil {
		if x := snap.ExtensionNamed(ext); x != nil {
			return dialplan.UserVariables(snap, x), nil
		}
	}
	return nil, fmt.Errorf("user variables %s@%s: %w", ext, tenant, models.ErrNotFound)
}

// everyTenantQueues reads, for every enabled tenant, the queues, agents,
// voice prompts and music-on-hold classes callcenter.conf at module load renders: two small indexed
// queries per tenant, a few at a time.
func (s *Service) everyTenantQueues(ctx context.Context) ([]*dialplan.TenantSnapshot, error) {
	db, t := s.st.Querier(), s.tables
	ts, _, err := t.tenants.query(ctx, db, "1 = 1")
	if err != nil {
		return nil, err
	}
	snaps := make([]*dialplan.TenantSnapshot, len(ts))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for i := range ts {
		if !ts[i].Enabled {
			continue
		}
		snap := &dialplan.TenantSnapshot{Tenant: ts[i].Tenant}
		snaps[i] = snap
		id := ts[i].ID
		g.Go(func() (err error) {
			snap.Queues, _, err = t.queues.query(gctx, db, byTenant, id)
			if err == nil {
				snap.Agents, _, err = t.agents.query(gctx, db, byTenant, id)
			}
			if err == nil {
				snap.VoicePrompts, _, err = t.prompts.query(gctx, db, byTenant, id)
			}
			if err == nil {
				snap.MusicOnHold, _, err = t.moh.query(gctx, db, byTenant, id)
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return snaps, nil
}

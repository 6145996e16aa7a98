package fsxml

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/switchboard/switchboard/dialplan"
	"github.com/switchboard/switchboard/models"
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
	dids       *table[dialplan.DID]
	trunks     *table[dialplan.SIPTrunk]
	servers    *table[dialplan.Server]
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
	t.dids, err = newTable[dialplan.DID](reg, sealer, "dids")
	add(err)
	t.trunks, err = newTable[dialplan.SIPTrunk](reg, sealer, "sip_trunks")
	add(err)
	t.servers, err = newTable[dialplan.Server](reg, sealer, "servers")
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
	t.dids.close()
	t.trunks.close()
	t.servers.close()
}

// defaultModelExtensions bounds how many extensions a tenant model holds
// (Service.modelExtensions); a larger tenant's extensions are read per
// fetch (only the ones it involves, in one query).
const defaultModelExtensions = 2000

// tenantModel is one tenant's routing model: the tenant and everything a
// render of its directory or contexts reads, prepared for shared use. A
// nil snap means no such tenant.
type tenantModel struct {
	id   int64
	snap *dialplan.TenantSnapshot
	// allExtensions is false when the tenant had more than
	// Service.modelExtensions: snap.Extensions is then empty and renders load
	// the extensions they involve.
	allExtensions bool
	weight        int
}

// buildTenant reads a tenant's model: one query per resource, each
// indexed by tenant (about a dozen queries per tenant and configuration
// generation, shared by every fetch under that generation).
func (s *Service) buildTenant(ctx context.Context, name string) (*tenantModel, error) {
	m := &tenantModel{weight: 1}
	if name == "" {
		return m, nil
	}
	db, t := s.st.DB(), s.tables
	ts, _, err := t.tenants.query(ctx, db, "tenant = ?", name)
	if err != nil || len(ts) == 0 {
		return m, err
	}
	m.id = ts[0].ID
	snap := &dialplan.TenantSnapshot{Tenant: ts[0].Tenant}
	// The resources are read concurrently (each on its own pooled
	// connection): on MySQL a fetch right after a write waits for the
	// slowest query, not for their sum.
	const byTenant = "tenant_id = ?"
	var weights [11]int
	g, gctx := errgroup.WithContext(ctx)
	if s.st.Dialect().SQLite {
		// In-process and CPU-bound, with a pool of four connections:
		// more at once only queues.
		g.SetLimit(2)
	}
	read := func(i int, q func() (int, error)) {
		g.Go(func() error {
			n, err := q()
			weights[i] = n
			return err
		})
	}
	var exts []dialplan.Extension
	read(0, func() (n int, err error) {
		exts, n, err = t.extensions.queryLimit(gctx, db, byTenant, s.modelExtensions+1, m.id)
		return n, err
	})
	read(1, func() (n int, err error) {
		snap.InboundRoutes, n, err = t.inbound.query(gctx, db, byTenant, m.id)
		return
	})
	read(2, func() (n int, err error) {
		snap.OutboundRoutes, n, err = t.outbound.query(gctx, db, byTenant, m.id)
		return
	})
	read(3, func() (n int, err error) {
		snap.Schedules, n, err = t.schedules.query(gctx, db, byTenant, m.id)
		return
	})
	read(4, func() (n int, err error) {
		snap.RoutingConditions, n, err = t.conditions.query(gctx, db, byTenant, m.id)
		return
	})
	read(5, func() (n int, err error) {
		snap.FeatureExtensions, n, err = t.features.query(gctx, db, byTenant, m.id)
		return
	})
	read(6, func() (n int, err error) {
		snap.EmergencyLocations, n, err = t.emergency.query(gctx, db, byTenant, m.id)
		return
	})
	read(7, func() (n int, err error) {
		snap.SpecialMailboxes, n, err = t.mailboxes.query(gctx, db, byTenant, m.id)
		return
	})
	read(8, func() (n int, err error) {
		snap.VoicePrompts, n, err = t.prompts.query(gctx, db, byTenant, m.id)
		return
	})
	read(9, func() (n int, err error) {
		om, n, err := t.officeMode.query(gctx, db, byTenant, m.id)
		if len(om) > 0 {
			snap.OfficeMode = &om[0]
		}
		return n, err
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if len(exts) <= s.modelExtensions {
		snap.Extensions, m.allExtensions = exts, true
	} else {
		weights[0] = 0
	}
	w := 0
	for _, n := range weights {
		w += n
	}
	snap.Prepare()
	m.snap, m.weight = snap, 1+w
	return m, nil
}

// extensionsFor returns the named extensions of a tenant whose model does
// not hold them, in one indexed query.
func (s *Service) extensionsFor(ctx context.Context, m *tenantModel, names ...string) ([]dialplan.Extension, error) {
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
		return []dialplan.Extension{}, nil
	}
	xs, _, err := s.tables.extensions.query(ctx, s.st.DB(), "tenant_id = ? AND name IN (?"+strings.Repeat(",?", len(args)-2)+")", args...)
	if xs == nil {
		xs = []dialplan.Extension{}
	}
	return xs, err
}

// snapshot is the tenant's snapshot for one render: the model's, with the
// platform's trunks this tenant may use and, for a tenant too large to
// hold, the extensions the render involves. nil for an unknown tenant.
func (s *Service) snapshot(ctx context.Context, m *tenantModel, p *platformModel, names ...string) (*dialplan.TenantSnapshot, error) {
	if m.snap == nil {
		return nil, nil
	}
	var exts []dialplan.Extension
	if !m.allExtensions {
		var err error
		if names == nil {
			exts, _, err = s.tables.extensions.query(ctx, s.st.DB(), "tenant_id = ?", m.id)
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
	if p != nil { // nil: the render reads no trunk (directory)
		trunks = p.trunksFor(m.snap.Tenant.Tenant)
	}
	return m.snap.Bind(trunks, exts), nil
}

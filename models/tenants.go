package models

import (
	"context"
	"fmt"
	"strings"
)

// tenantHooks: new tenants get their office mode and default feature codes,
// and are optionally cloned from another tenant in the same transaction.
type tenantHooks struct{}

var (
	_ beforeSaver  = tenantHooks{}
	_ afterCreator = tenantHooks{}
)

// cloneFlags are the seed's copy flags.
var cloneFlags = []string{"tenant_limits", "tenant_routes", "tenant_schedules", "tenant_menus", "tenant_queues", "tenant_voiceprompts"}

// limitFields are what tenant_limits copies.
var limitFields = []string{"max_extensions", "max_concurrent_calls", "max_queues", "max_ivr_menus",
	"max_conference_rooms", "max_storage_mb", "recording_policy", "recording_retention_days"}

// reservedContexts are FreeSWITCH dialplan contexts and Switchboard's own
// names; a tenant's name is its context and its cache-generation key, so
// these (and every name starting with "_") are refused.
var reservedContexts = map[string]bool{"public": true, "default": true, "features": true}

// reservedTenantName reports whether a tenant may not be called name.
func reservedTenantName(name string) bool {
	return reservedContexts[strings.ToLower(name)] || strings.HasPrefix(name, "_")
}

func (tenantHooks) beforeSave(ctx context.Context, ts *txStore, _ Owner, old, patch Record) error {
	if name, _ := patch["tenant"].(string); old == nil && reservedTenantName(name) {
		return FieldError("tenant", "%q is reserved (public, default, features and names starting with _)", name)
	}
	if err := checkTimezone("timezone", patch["timezone"]); err != nil {
		return err
	}
	if src, ok := patch["tenant_to_clone"].(string); ok && src != "" {
		if _, err := ts.tenantOwner(ctx, ts.tx, src); err != nil {
			return FieldError("tenant_to_clone", "tenant %q does not exist", src)
		}
	}
	for _, flag := range cloneFlags {
		if v, ok := patch[flag].(string); ok && v != "" && v != "1" && v != "0" {
			return FieldError(flag, `must be "1" to copy`)
		}
	}
	return nil
}

func (tenantHooks) afterCreate(ctx context.Context, ts *txStore, _ Owner, rec Record) error {
	dst, err := ts.tenantOwner(ctx, ts.tx, rec["tenant"].(string))
	if err != nil {
		return err
	}
	flags := map[string]bool{}
	src, _ := rec["tenant_to_clone"].(string)
	if src != "" {
		for _, f := range cloneFlags {
			flags[f] = rec[f] == "1"
		}
	}
	if !flags["tenant_routes"] {
		if err := ts.featureDefaults(ctx, dst); err != nil {
			return err
		}
	}
	if !flags["tenant_schedules"] {
		if err := ts.create(ctx, officeModeResource, dst, Record{"mode": "auto", "description": ""}); err != nil {
			return fmt.Errorf("office mode: %w", err)
		}
	}
	if err := ts.singletonDefaults(ctx, dst); err != nil {
		return err
	}
	if src == "" {
		return nil
	}
	from, err := ts.tenantOwner(ctx, ts.tx, src)
	if err != nil {
		return err
	}
	if flags["tenant_limits"] {
		set := strings.Join(limitFields, " = ?, ") + " = ?"
		var vals []any
		row, err := ts.getRow(ctx, ts.tx, tenantsResource, Owner{}, src)
		if err != nil {
			return err
		}
		for _, f := range limitFields {
			vals = append(vals, row[f])
		}
		if _, err := ts.tx.ExecContext(ctx, "UPDATE tenants SET "+set+" WHERE id = ?", append(vals, dst.TenantID)...); err != nil {
			return fmt.Errorf("clone limits: %w", ts.dialect.translate(err))
		}
	}
	ts.cloning = true
	report, err := ts.cloneResources(ctx, from, dst, flags)
	ts.cloning = false
	if err != nil {
		return fmt.Errorf("clone tenant %s: %w", src, err)
	}
	rec["clone_report"] = report
	return nil
}

// singletonDefaults gives a new tenant its other singletons (branding,
// directory settings) with their defaults: singletons are only ever read
// and changed, never created through the API.
func (ts *txStore) singletonDefaults(ctx context.Context, o Owner) error {
	for _, res := range ts.reg.Resources() {
		if res.Scope != TenantScope || !res.Singleton || res == officeModeResource || res.Custom() {
			continue
		}
		rec, err := Validate(res, map[string]any{}, Create)
		if err != nil {
			return fmt.Errorf("default %s: %w", res.Name, err)
		}
		if err := ts.create(ctx, res, o, rec); err != nil {
			return fmt.Errorf("default %s: %w", res.Name, err)
		}
	}
	return nil
}

// cloner adjusts a copied record (cloned inbound routes lose their DID).
type cloner interface{ cloneRecord(rec Record) }

// cloneResources copies every tenant resource whose CloneFlag is set, in
// registry order, remapping references to copies made earlier and clearing
// (and reporting) references to objects that were not copied. Later
// resources join cloning by declaring a CloneFlag: no code here changes.
func (ts *txStore) cloneResources(ctx context.Context, from, to Owner, flags map[string]bool) ([]string, error) {
	report := []string{}
	idMap := map[string]map[int64]int64{}
	for _, res := range ts.reg.Resources() {
		if res.Scope != TenantScope || res.CloneFlag == "" || !flags[res.CloneFlag] {
			continue
		}
		where, args := ownerWhere(res, from)
		rows, err := ts.queryRecords(ctx, ts.tx, res, "SELECT "+strings.Join(ts.columns(res), ", ")+" FROM "+res.Table+" WHERE "+where+" ORDER BY id", args...)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", res.Name, err)
		}
		idMap[res.Name] = map[int64]int64{}
		for _, row := range rows {
			oldID, _ := row["id"].(int64)
			rec, notes, err := ts.cloneRecord(res, row, idMap)
			if err != nil {
				return nil, err
			}
			for _, n := range notes {
				report = append(report, fmt.Sprintf("%s %d: %s", res.Name, oldID, n))
			}
			newID, err := ts.insertRow(ctx, res, to, rec)
			if err != nil {
				return nil, fmt.Errorf("copy %s %d: %w", res.Name, oldID, err)
			}
			if err := ts.recordCreate(ctx, res, to, rec, newID); err != nil {
				return nil, err
			}
			idMap[res.Name][oldID] = newID
		}
	}
	return report, nil
}

func (ts *txStore) cloneRecord(res *Resource, row Record, idMap map[string]map[int64]int64) (Record, []string, error) {
	rec := Record{}
	var notes []string
	for _, f := range res.Fields {
		if !f.Stored() {
			continue
		}
		v := row[f.Name]
		switch {
		case f.Secret == Encrypted && v != nil:
			plain, err := ts.sealer.Open(v.(string))
			if err != nil {
				return nil, nil, err
			}
			v = plain
		case f.Secret == Hashed || f.Secret == Digest:
			v = nil
		case f.Ref != "" && f.Type == Int && v != nil:
			if m, copied := idMap[f.Ref]; copied && m[v.(int64)] != 0 {
				v = m[v.(int64)]
			} else if ts.reg.Resource(f.Ref).Scope == TenantScope {
				notes = append(notes, fmt.Sprintf("%s cleared (%s %d was not copied)", f.Name, f.Ref, v))
				v = nil
			}
		}
		rec[f.Name] = v
	}
	if h, ok := res.Hooks.(cloner); ok {
		h.cloneRecord(rec)
	}
	return rec, notes, nil
}

// tenantOwner resolves a tenant name to its Owner.
func (s *Store) tenantOwner(ctx context.Context, q querier, name string) (Owner, error) {
	var o struct {
		ID     int64  `db:"id"`
		Tenant string `db:"tenant"`
	}
	if err := q.GetContext(ctx, &o, "SELECT id, tenant FROM tenants WHERE tenant = ?", name); err != nil {
		return Owner{}, s.dialect.translate(err)
	}
	return Owner{TenantID: o.ID, Tenant: o.Tenant}, nil
}

// Tenant resolves a tenant name (case-insensitively) to its Owner, or ErrNotFound.
func (s *Store) Tenant(ctx context.Context, name string) (Owner, error) {
	o, err := s.tenantOwner(ctx, s.db, name)
	if err != nil {
		return Owner{}, fmt.Errorf("tenant %q: %w", name, err)
	}
	return o, nil
}

var _ beforeDeleter = tenantHooks{}

// beforeDelete removes the tenant's configuration with it, in the same
// transaction: every tenant resource (children before the objects they
// reference), its number plan, and its DIDs go back to the unassigned pool;
// its API keys are revoked and kept for audit.
func (tenantHooks) beforeDelete(ctx context.Context, ts *txStore, _ Owner, old Record) error {
	o, err := ts.tenantOwner(ctx, ts.tx, old["tenant"].(string))
	if err != nil {
		return err
	}
	ts2 := now()
	// DIDs reference inbound routes: release them before the routes go.
	if _, err := ts.tx.ExecContext(ctx, "UPDATE dids SET tenant = NULL, inbound_route_id = NULL, updated_at = ? WHERE tenant = ?", ts2, o.Tenant); err != nil {
		return fmt.Errorf("delete tenant %s: release DIDs: %w", o.Tenant, ts.dialect.translate(err))
	}
	for _, res := range tenantDeleteOrder(ts.reg) {
		// Self-references (department and account parents) are cut first:
		// InnoDB checks foreign keys row by row, so one DELETE could
		// otherwise remove a parent before its child.
		for _, f := range res.Fields {
			if f.Ref == res.Name && f.Type == Int && f.Stored() {
				if _, err := ts.tx.ExecContext(ctx, "UPDATE "+res.Table+" SET "+f.Name+" = NULL WHERE tenant_id = ?", o.TenantID); err != nil {
					return fmt.Errorf("delete tenant %s: %s: %w", o.Tenant, res.Name, ts.dialect.translate(err))
				}
			}
		}
		if _, err := ts.tx.ExecContext(ctx, "DELETE FROM "+res.Table+" WHERE tenant_id = ?", o.TenantID); err != nil {
			return fmt.Errorf("delete tenant %s: %s: %w", o.Tenant, res.Name, ts.dialect.translate(err))
		}
	}
	stmts := []struct {
		q    string
		args []any
	}{
		{"DELETE FROM numbers WHERE tenant_id = ?", []any{o.TenantID}},
		{"DELETE FROM chat_accounts WHERE tenant_id = ?", []any{o.TenantID}},
		{"DELETE FROM refs WHERE tenant_id = ? OR to_tenant_id = ?", []any{o.TenantID, o.TenantID}},
		{"UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?), tenant_id = NULL, updated_at = ? WHERE tenant_id = ?", []any{ts2, ts2, o.TenantID}},
	}
	for _, st := range stmts {
		if _, err := ts.tx.ExecContext(ctx, st.q, st.args...); err != nil {
			return fmt.Errorf("delete tenant %s: %w", o.Tenant, ts.dialect.translate(err))
		}
	}
	return nil
}

// tenantDeleteOrder sorts tenant resources so that each comes before every
// resource it references (a topological order over Ref fields). A
// self-reference does not block a resource: beforeDelete cuts it first.
func tenantDeleteOrder(reg *Registry) []*Resource {
	var pending []*Resource
	for _, r := range reg.Resources() {
		if r.Scope == TenantScope && !r.Custom() {
			pending = append(pending, r)
		}
	}
	var out []*Resource
	for len(pending) > 0 {
		progressed := false
		for i, r := range pending {
			referenced := false
			for _, other := range pending {
				if other == r {
					continue
				}
				for _, f := range other.Fields {
					if f.Ref == r.Name {
						referenced = true
					}
				}
			}
			if !referenced {
				out = append(out, r)
				pending = append(pending[:i], pending[i+1:]...)
				progressed = true
				break
			}
		}
		if !progressed { // a reference cycle: fall back to declaration order
			return append(out, pending...)
		}
	}
	return out
}

package models

import (
	"context"
	"fmt"
	"strconv"
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
	if err := ts.checkTenantMOH(ctx, old, patch); err != nil {
		return err
	}
	return ts.checkResellerLimits(ctx, old, patch)
}

// checkTenantMOH: a tenant's default hold music is one of its own classes.
// The tenant is a platform object naming a tenant object, which the refs
// table does not track, so the class is checked here and its delete is
// refused by mohHooks while a tenant names it. A new tenant has no class
// yet.
func (ts *txStore) checkTenantMOH(ctx context.Context, old, patch Record) error {
	id, ok := patch["moh_class_id"]
	if !ok || id == nil {
		return nil
	}
	if old == nil {
		return FieldError("moh_class_id", "a new tenant has no music-on-hold class yet: set it once the class exists")
	}
	o, err := ts.tenantOwner(ctx, ts.tx, old["tenant"].(string))
	if err != nil {
		return err
	}
	n, err := ts.count(ctx, "moh_class_id", "SELECT COUNT(*) FROM music_on_hold WHERE id = ? AND tenant_id = ?", id, o.TenantID)
	if err != nil {
		return err
	}
	if n == 0 {
		return FieldError("moh_class_id", "music-on-hold class %v does not exist", id)
	}
	return nil
}

// mohHooks: a class that is its tenant's default hold music cannot be
// deleted (409, like any referenced object).
type mohHooks struct{ rules }

var _ beforeDeleter = mohHooks{}

func (mohHooks) beforeDelete(ctx context.Context, ts *txStore, o Owner, old Record) error {
	n, err := ts.count(ctx, "moh_class_id", "SELECT COUNT(*) FROM tenants WHERE id = ? AND moh_class_id = ?", o.TenantID, old["id"])
	if err != nil {
		return err
	}
	if n > 0 {
		return referencedError(musicOnHoldResource, old, "cannot be deleted", []string{"tenant " + o.Tenant + " (moh_class_id)"})
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
		// The copied limits count against the new tenant's reseller.
		withLimits := merged(rec, Record{})
		for i, f := range limitFields {
			withLimits[f] = vals[i]
		}
		if err := ts.checkResellerLimits(ctx, nil, withLimits); err != nil {
			return err
		}
	}
	ts.cloning = true
	report, copies, err := ts.cloneResources(ctx, from, dst, flags)
	ts.cloning = false
	if err != nil {
		return fmt.Errorf("clone tenant %s: %w", src, err)
	}
	notes, err := ts.cloneTenantRefs(ctx, src, dst, copies)
	if err != nil {
		return err
	}
	report = append(report, notes...)
	rec["clone_report"] = report
	return nil
}

// cloneTenantRefs gives the clone the source tenant's own references to
// objects of the tenant (its default hold music, moh_class_id): each points at the
// copy of its target when that was copied (copies: per resource, the
// copies' ids by the originals'), else it stays empty, with a note for the
// clone report.
func (ts *txStore) cloneTenantRefs(ctx context.Context, src string, dst Owner, copies map[string]map[int64]int64) ([]string, error) {
	row, err := ts.getRow(ctx, ts.tx, tenantsResource, Owner{}, src)
	if err != nil {
		return nil, err
	}
	var notes []string
	for _, f := range tenantsResource.Fields {
		old, ok := row[f.Name].(int64)
		if f.Ref == "" || !ok || ts.reg.Resource(f.Ref).Scope != TenantScope {
			continue // platform objects (reseller, location) are the request's to name
		}
		id, copied := copies[f.Ref][old]
		if !copied {
			notes = append(notes, fmt.Sprintf("tenants %s: %s cleared (%s %d is not copied)", src, f.Name, f.Ref, old))
			continue
		}
		if _, err := ts.tx.ExecContext(ctx, "UPDATE tenants SET "+f.Name+" = ? WHERE id = ?", id, dst.TenantID); err != nil {
			return nil, fmt.Errorf("clone %s: %w", f.Name, ts.dialect.translate(err))
		}
	}
	return notes, nil
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

// cloneResources copies every tenant resource whose CloneFlag is set,
// targets of id references first (cloneOrder), remapping references to the
// copies and clearing (and reporting) references to objects that are not
// copied. Later resources join cloning by declaring a CloneFlag: no code
// here changes.
// It returns the report and, per copied resource, the copies' ids by the
// originals'.
func (ts *txStore) cloneResources(ctx context.Context, from, to Owner, flags map[string]bool) ([]string, map[string]map[int64]int64, error) {
	report := []string{}
	c := &cloneRun{ts: ts, flags: flags, idMap: map[string]map[int64]int64{}}
	for _, res := range cloneOrder(ts.reg, flags) {
		where, args := ownerWhere(res, from)
		rows, err := ts.queryRecords(ctx, ts.tx, res, "SELECT "+strings.Join(ts.columns(res), ", ")+" FROM "+res.Table+" WHERE "+where+" ORDER BY id", args...)
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", res.Name, err)
		}
		c.idMap[res.Name] = map[int64]int64{}
		for _, row := range rows {
			oldID, _ := row["id"].(int64)
			rec, notes, err := c.record(res, row)
			if err != nil {
				return nil, nil, err
			}
			for _, n := range notes {
				report = append(report, fmt.Sprintf("%s %d: %s", res.Name, oldID, n))
			}
			copied, err := ts.copyAudio(ctx, res, from, to, rec)
			if err != nil {
				return nil, nil, fmt.Errorf("copy %s %d: %w", res.Name, oldID, err)
			}
			newID, err := ts.insertRow(ctx, res, to, rec)
			if err != nil {
				return nil, nil, fmt.Errorf("copy %s %d: %w", res.Name, oldID, err)
			}
			if err := ts.recordCreate(ctx, res, to, rec, newID); err != nil {
				return nil, nil, err
			}
			owned, err := ts.copyOwnedFiles(ctx, res, from, to, oldID, newID, rec)
			if err != nil {
				return nil, nil, fmt.Errorf("copy %s %d files: %w", res.Name, oldID, err)
			}
			for _, f := range append(copied, owned...) {
				report = append(report, fmt.Sprintf("%s %d: copied file %s", res.Name, oldID, f))
			}
			c.idMap[res.Name][oldID] = newID
		}
	}
	return report, c.idMap, nil
}

// cloneOrder is the resources a clone copies, each after the resources it
// refers to by id (integer refs, and voice prompts for any destination,
// whose prompt_then_hangup names a prompt id), so those references can be
// remapped to the copies; otherwise in registry order.
func cloneOrder(reg *Registry, flags map[string]bool) []*Resource {
	var pending []*Resource
	for _, res := range reg.Resources() {
		if res.Scope == TenantScope && res.CloneFlag != "" && flags[res.CloneFlag] {
			pending = append(pending, res)
		}
	}
	deps := map[*Resource]map[string]bool{}
	for _, res := range pending {
		deps[res] = map[string]bool{}
		var walk func(fs []*Field)
		walk = func(fs []*Field) {
			for _, f := range fs {
				switch {
				case f.Type == Destination:
					for _, t := range destinationRefs {
						if t[1] == "id" {
							deps[res][t[0]] = true
						}
					}
				case f.Ref != "" && (f.Type == Int || f.Type == IntList):
					deps[res][f.Ref] = true
				}
				walk(f.Props)
			}
		}
		walk(res.Fields)
		delete(deps[res], res.Name)
	}
	var out []*Resource
	for len(pending) > 0 {
		next := 0 // a cycle falls back to declaration order
		for i, res := range pending {
			ready := true
			for d := range deps[res] {
				for _, p := range pending {
					if p.Name == d {
						ready = false
					}
				}
			}
			if ready {
				next = i
				break
			}
		}
		out = append(out, pending[next])
		pending = append(pending[:next], pending[next+1:]...)
	}
	return out
}

// cloneRun is one tenant clone: which resources are copied and the ids
// their copies got so far.
type cloneRun struct {
	ts    *txStore
	flags map[string]bool
	idMap map[string]map[int64]int64
}

// record is row prepared for the new tenant: encrypted secrets opened (the
// insert seals them again), hashed secrets dropped, and every reference to
// a tenant object remapped to its copy or, when the target is not copied,
// cleared with a note for the clone report.
func (c *cloneRun) record(res *Resource, row Record) (Record, []string, error) {
	rec := Record{}
	var notes []string
	for _, f := range res.Fields {
		if !f.Stored() {
			continue
		}
		v := row[f.Name]
		switch {
		case f.Secret == Encrypted && v != nil:
			plain, err := c.ts.sealer.Open(v.(string))
			if err != nil {
				return nil, nil, err
			}
			v = plain
		case f.Secret == Hashed || f.Secret == Digest:
			v = nil
		default:
			nv, keep, n := c.remap(f, f.Name, v)
			notes = append(notes, n...)
			switch {
			case keep:
				v = nv
			case f.Type == Destination && f.Required:
				v = map[string]any{"type": "hangup"}
				notes = append(notes, f.Name+" set to hangup")
			default:
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

// remap walks one value the way references are declared (walkRefs): it
// answers the value for the copy, or keep=false when the value itself is a
// reference to an object that is not copied. List items and object-list
// items whose required reference goes are dropped.
func (c *cloneRun) remap(f *Field, path string, v any) (any, bool, []string) {
	if v == nil {
		return nil, true, nil
	}
	if f.Type == Destination {
		d, _ := v.(map[string]any)
		typ, _ := d["type"].(string)
		target, _ := d["target"].(string)
		t, ok := destinationRefs[typ]
		if !ok || target == "" {
			return v, true, nil
		}
		key, ok := c.target(t[0], t[1], target)
		if !ok {
			return nil, false, []string{fmt.Sprintf("%s cleared (%s %s %s was not copied)", path, typ, t[1], target)}
		}
		out := map[string]any{}
		for k, x := range d {
			out[k] = x
		}
		out["target"] = key
		return out, true, nil
	}
	if len(f.Props) > 0 {
		items := []any{v}
		if f.Type == ObjectList {
			items, _ = v.([]any)
		}
		kept := []any{}
		var notes []string
	item:
		for i, it := range items {
			m, _ := it.(map[string]any)
			p := path
			if f.Type == ObjectList {
				p = fmt.Sprintf("%s[%d]", path, i)
			}
			out := map[string]any{}
			for k, x := range m {
				out[k] = x
			}
			for _, pf := range f.Props {
				if pf.RefWhen[0] != "" && fmt.Sprint(m[pf.RefWhen[0]]) != pf.RefWhen[1] {
					continue
				}
				nv, keep, n := c.remap(pf, p+"."+pf.Name, m[pf.Name])
				notes = append(notes, n...)
				if !keep && pf.Required {
					notes = append(notes, p+" dropped")
					continue item
				}
				if !keep {
					nv = nil
				}
				out[pf.Name] = nv
			}
			kept = append(kept, out)
		}
		if f.Type != ObjectList {
			if len(kept) == 0 {
				return nil, false, notes
			}
			return kept[0], true, notes
		}
		return kept, true, notes
	}
	if f.Ref == "" {
		return v, true, nil
	}
	target := c.ts.reg.Resource(f.Ref)
	if f.Type != StringList && f.Type != IntList {
		key, ok := c.target(f.Ref, f.refCol(target), refKeyString(v))
		if !ok {
			return nil, false, []string{fmt.Sprintf("%s cleared (%s %v was not copied)", path, f.Ref, v)}
		}
		return typedKey(v, key), true, nil
	}
	items, _ := v.([]any)
	kept := []any{}
	var notes []string
	for i, it := range items {
		key, ok := c.target(f.Ref, f.refCol(target), refKeyString(it))
		if !ok {
			notes = append(notes, fmt.Sprintf("%s[%d] dropped (%s %v was not copied)", path, i, f.Ref, it))
			continue
		}
		kept = append(kept, typedKey(it, key))
	}
	return kept, true, notes
}

// target answers the key a reference to resource name's object (by col)
// has in the new tenant: the same key when the copy keeps it, the copy's id
// for id references, ok=false when the object is not copied. Platform
// objects (trunks, DIDs) are shared and keep their key.
func (c *cloneRun) target(name, col, key string) (string, bool) {
	res := c.ts.reg.Resource(name)
	if res == nil || res.Scope != TenantScope {
		return key, true
	}
	if res.CloneFlag == "" || !c.flags[res.CloneFlag] {
		return "", false
	}
	if col != "id" {
		return key, true
	}
	id, err := strconv.ParseInt(key, 10, 64)
	if err != nil || c.idMap[name][id] == 0 {
		return "", false
	}
	return strconv.FormatInt(c.idMap[name][id], 10), true
}

// typedKey is key in the type the original value had.
func typedKey(orig any, key string) any {
	switch orig.(type) {
	case int64, int, float64:
		n, _ := strconv.ParseInt(key, 10, 64)
		return n
	}
	return key
}

// AudioCopier copies a stored audio file to another tenant's media library
// (tenant cloning: "voice prompts (files copied)"). The media service
// implements it beside AudioSink.
type AudioCopier interface {
	CopyAudio(ctx context.Context, fromTenant, toTenant, filename string) (rel string, err error)
}

// OwnedFileCopier copies the files a copied record owns beyond its own
// filename field, with their rows, inside the clone's transaction: a
// music-on-hold class's files (package media's moh_files). It answers the
// names of the files copied and their library paths (removed again when
// the transaction does not commit); a resource without such files copies
// nothing.
type OwnedFileCopier interface {
	CopyOwnedFiles(ctx context.Context, q Querier, resource string, from, to Owner, fromID, toID int64, rec Record) (names, rels []string, err error)
}

// copyAudio gives a copied record that names a stored file (a voice
// prompt) its own copy of the file in the new tenant's library, and
// answers the file's name; the copy is removed again when the transaction
// does not commit.
func (ts *txStore) copyAudio(ctx context.Context, res *Resource, from, to Owner, rec Record) ([]string, error) {
	name, _ := rec["filename"].(string)
	f := res.Field("filename")
	if name == "" || f == nil || !f.ReadOnly {
		return nil, nil
	}
	cp, ok := ts.audio.(AudioCopier)
	if !ok {
		return nil, ErrNoAudioStore
	}
	rel, err := cp.CopyAudio(ctx, from.Tenant, to.Tenant, name)
	if err != nil {
		return nil, err
	}
	ts.undo = append(ts.undo, func() { ts.audio.RemoveAudio(rel) })
	return []string{name}, nil
}

// copyOwnedFiles copies the files a record owns (OwnedFileCopier) when the
// media library is configured; without one a record that lists files
// (a class's files field) cannot be copied whole and the clone fails.
func (ts *txStore) copyOwnedFiles(ctx context.Context, res *Resource, from, to Owner, fromID, toID int64, rec Record) ([]string, error) {
	cp, ok := ts.audio.(OwnedFileCopier)
	if !ok {
		if files, _ := rec["files"].([]any); len(files) > 0 && res.Field("files") != nil && res.Field("files").ReadOnly {
			return nil, ErrNoAudioStore
		}
		return nil, nil
	}
	names, rels, err := cp.CopyOwnedFiles(ctx, ts.txQuerier(ts.tx), res.Name, from, to, fromID, toID, rec)
	for _, rel := range rels {
		ts.undo = append(ts.undo, func() { ts.audio.RemoveAudio(rel) })
	}
	return names, err
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
	// The tenant names one of its classes as its hold music: cut that
	// before the classes go.
	if _, err := ts.tx.ExecContext(ctx, "UPDATE tenants SET moh_class_id = NULL WHERE id = ?", o.TenantID); err != nil {
		return fmt.Errorf("delete tenant %s: hold music: %w", o.Tenant, ts.dialect.translate(err))
	}
	// DIDs reference inbound routes: release them before the routes go.
	if _, err := ts.tx.ExecContext(ctx, "UPDATE dids SET tenant = NULL, inbound_route_id = NULL, updated_at = ? WHERE tenant = ?", ts2, o.Tenant); err != nil {
		return fmt.Errorf("delete tenant %s: release DIDs: %w", o.Tenant, ts.dialect.translate(err))
	}
	// Every optional reference between the tenant's objects (a hold music
	// class's chime prompt, a department's parent) is cut first, so no
	// object of the tenant keeps another from going; the required ones
	// are followed by the delete order.
	order := tenantDeleteOrder(ts.reg)
	for _, res := range order {
		for _, f := range res.Fields {
			if fkColumn(f) && !f.Required {
				if _, err := ts.tx.ExecContext(ctx, "UPDATE "+res.Table+" SET "+f.Name+" = NULL WHERE tenant_id = ? AND "+f.Name+" IS NOT NULL", o.TenantID); err != nil {
					return fmt.Errorf("delete tenant %s: %s: %w", o.Tenant, res.Name, ts.dialect.translate(err))
				}
			}
		}
	}
	for _, res := range order {
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

// fkColumn reports whether a field is a foreign-key column (DDL).
func fkColumn(f *Field) bool { return f.Ref != "" && f.Stored() && f.Type == Int }

// tenantDeleteOrder sorts tenant resources so that each comes before every
// resource it references through a required foreign key (a topological
// order; beforeDelete cuts the optional ones first, self-references
// included).
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
					if f.Ref == r.Name && fkColumn(f) && f.Required {
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
		if !progressed { // a cycle of required references: declaration order
			return append(out, pending...)
		}
	}
	return out
}

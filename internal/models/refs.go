package models

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// References. A field declares what it refers to with Ref (and RefKey, the
// target's column, default its id for integers and its path key for
// strings; RefWhen to limit it to items whose sibling has a value).
// Lists refer per item, objects and object lists through their props, and
// destinations through destinationRefs. One walk (refsOf) finds them all;
// writes check them (400 naming the field and the missing target) and keep
// them in the refs table in the same transaction; deletes and key renames
// of a referenced object are refused with its referrers (409). Adding a
// reference is a declaration, never code here.

// destinationRefs says what each destination type's target names.
var destinationRefs = map[string][2]string{
	"extension":          {"extensions", "name"},
	"voicemail":          {"extensions", "name"},
	"special_mailbox":    {"special_mailboxes", "number"},
	"queue":              {"queues", "number"},
	"hunt_group":         {"hunt_groups", "number"},
	"ivr":                {"ivr_menus", "number"},
	"conference":         {"conference_rooms", "number"},
	"routing_condition":  {"routing_conditions", "number"},
	"special_endpoint":   {"special_endpoints", "number"},
	"directory":          {"company_directory_settings", "number"},
	"prompt_then_hangup": {"voice_prompts", "id"},
}

// DestinationRef is the resource and column a destination type's target
// names ("queue" → queues' number); ok is false for targets that name no
// object (external numbers, hangup causes).
func DestinationRef(typ string) (resource, column string, ok bool) {
	r, ok := destinationRefs[typ]
	return r[0], r[1], ok
}

// ref is one reference found in a record.
type ref struct {
	field  string // top-level field, for 400 answers
	path   string // where inside it (members[2].target)
	target *Resource
	col    string
	key    string
}

// refCol is the target column a reference field names.
func (f *Field) refCol(target *Resource) string {
	switch {
	case f.RefKey != "":
		return f.RefKey
	case f.Type == Int || f.Type == IntList:
		return "id"
	}
	return target.KeyField()
}

// RefColumn is the column of target a reference field's values name
// (id, or a key such as an extension's number): what a picker offers.
func (f *Field) RefColumn(target *Resource) string { return f.refCol(target) }

// refsOf lists every reference rec holds in the given fields (all stored
// fields when only is nil).
func (reg *Registry) refsOf(res *Resource, rec Record, only map[string]bool) []ref {
	var out []ref
	for _, f := range res.Fields {
		v, ok := rec[f.Name]
		if !ok || v == nil || !f.Stored() || (only != nil && !only[f.Name]) {
			continue
		}
		reg.walkRefs(f.Name, f.Name, f, v, nil, &out)
	}
	return out
}

func (reg *Registry) walkRefs(top, path string, f *Field, v any, siblings map[string]any, out *[]ref) {
	if v == nil {
		return
	}
	if f.Type == Destination {
		d, _ := v.(map[string]any)
		typ, _ := d["type"].(string)
		target, _ := d["target"].(string)
		if t, ok := destinationRefs[typ]; ok && target != "" {
			*out = append(*out, ref{field: top, path: path, target: reg.byName[t[0]], col: t[1], key: target})
		}
		return
	}
	if len(f.Props) > 0 {
		items := []any{v}
		if f.Type == ObjectList {
			items, _ = v.([]any)
		}
		for i, it := range items {
			m, _ := it.(map[string]any)
			p := path
			if f.Type == ObjectList {
				p = fmt.Sprintf("%s[%d]", path, i)
			}
			for _, pf := range f.Props {
				reg.walkRefs(top, p+"."+pf.Name, pf, m[pf.Name], m, out)
			}
		}
		return
	}
	targetName := f.Ref
	if f.RefBy != "" {
		typ, _ := siblings[f.RefBy].(string)
		targetName = f.RefTargets[typ]
	}
	if targetName == "" {
		return
	}
	if f.RefWhen[0] != "" && fmt.Sprint(siblings[f.RefWhen[0]]) != f.RefWhen[1] {
		return
	}
	target := reg.byName[targetName]
	items := []any{v}
	if f.Type == StringList || f.Type == IntList {
		items, _ = v.([]any)
	}
	for i, it := range items {
		key := refKeyString(it)
		if key == "" {
			continue
		}
		p := path
		if len(items) > 1 || f.Type == StringList || f.Type == IntList {
			p = fmt.Sprintf("%s[%d]", path, i)
		}
		*out = append(*out, ref{field: top, path: p, target: target, col: f.refCol(target), key: key})
	}
}

func refKeyString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatInt(int64(x), 10)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// tracked reports whether a reference from res to target is kept: a
// platform object naming a tenant's object (a DID's inbound route) is
// checked by its own hook, and tenants are never blocked by what refers
// to them (deleting a tenant removes or releases its objects).
func tracked(res, target *Resource) bool {
	return !(res.Scope != TenantScope && target.Scope == TenantScope) && target != tenantsResource
}

// checkRefs verifies that every reference in the fields of patch resolves,
// in the same tenant for tenant targets.
func (ts *txStore) checkRefs(ctx context.Context, res *Resource, o Owner, patch Record) error {
	only := map[string]bool{}
	for k := range patch {
		only[k] = true
	}
	verr := &ValidationError{}
	for _, r := range ts.reg.refsOf(res, patch, only) {
		if !tracked(res, r.target) || verr.Fields[r.field] != "" {
			continue
		}
		where, args := r.col+" = ?", []any{r.key}
		if r.target.Scope == TenantScope {
			where += " AND tenant_id = ?"
			args = append(args, o.TenantID)
		}
		n, err := ts.count(ctx, r.field, "SELECT COUNT(*) FROM "+r.target.Table+" WHERE "+where, args...)
		if err != nil {
			return err
		}
		if n == 0 {
			verr.add(r.field, "%s: %s %s does not exist", r.path, r.target.Title, r.key)
		}
	}
	return verr.orNil()
}

// saveRefs replaces the rows of the object's references (under oldKey,
// "" for a new object) with those rec, the whole object, holds.
func (ts *txStore) saveRefs(ctx context.Context, res *Resource, o Owner, oldKey string, rec Record) error {
	if err := ts.dropRefs(ctx, res, o, oldKey); err != nil {
		return err
	}
	key := changeKey(res, rec)
	label := key
	if n, ok := rec["name"].(string); ok && n != "" && n != key {
		label = n
	}
	seen := map[string]bool{}
	for _, r := range ts.reg.refsOf(res, rec, nil) {
		if !tracked(res, r.target) {
			continue
		}
		toTenant := int64(0)
		if r.target.Scope == TenantScope {
			toTenant = o.TenantID
		}
		id := r.field + "\x00" + r.target.Name + "\x00" + r.col + "\x00" + r.key
		if seen[id] {
			continue
		}
		seen[id] = true
		if _, err := ts.tx.ExecContext(ctx, "INSERT INTO refs (tenant_id, from_resource, from_key, from_label, field, to_tenant_id, to_resource, to_col, to_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
			o.TenantID, res.Name, key, label, r.field, toTenant, r.target.Name, r.col, r.key); err != nil {
			return fmt.Errorf("record references of %s %s: %w", res.Title, key, ts.dialect.translate(err))
		}
	}
	return nil
}

func (ts *txStore) dropRefs(ctx context.Context, res *Resource, o Owner, key string) error {
	if key == "" {
		return nil
	}
	if _, err := ts.tx.ExecContext(ctx, "DELETE FROM refs WHERE tenant_id = ? AND from_resource = ? AND from_key = ?", o.TenantID, res.Name, key); err != nil {
		return fmt.Errorf("drop references of %s %s: %w", res.Title, key, ts.dialect.translate(err))
	}
	return nil
}

// referrers lists who refers to the object old of res through one of cols
// (all its referenced columns when cols is nil), as "inbound route main
// (destination)".
func (ts *txStore) referrers(ctx context.Context, res *Resource, o Owner, old Record, cols []string) ([]string, error) {
	if cols == nil {
		cols = ts.reg.refCols[res.Name]
	}
	if len(cols) == 0 {
		return nil, nil
	}
	toTenant := int64(0)
	if res.Scope == TenantScope {
		toTenant = o.TenantID
	}
	var conds []string
	args := []any{toTenant, res.Name}
	for _, c := range cols {
		v := refKeyString(old[c])
		if v == "" {
			continue
		}
		conds = append(conds, "(to_col = ? AND to_key = ?)")
		args = append(args, c, v)
	}
	if len(conds) == 0 {
		return nil, nil
	}
	var rows []struct {
		Resource string `db:"from_resource"`
		Label    string `db:"from_label"`
		Field    string `db:"field"`
	}
	if err := ts.tx.SelectContext(ctx, &rows, "SELECT from_resource, from_label, field FROM refs WHERE to_tenant_id = ? AND to_resource = ? AND ("+strings.Join(conds, " OR ")+")", args...); err != nil {
		return nil, fmt.Errorf("find references to %s: %w", res.Title, ts.dialect.translate(err))
	}
	seen := map[string]bool{}
	var out []string
	for _, r := range rows {
		title := r.Resource
		if rr := ts.reg.byName[r.Resource]; rr != nil {
			title = rr.Title
		}
		s := fmt.Sprintf("%s %s (%s)", title, r.Label, r.Field)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out, nil
}

// ReferencedError is a 409: the object is still used.
func referencedError(res *Resource, old Record, what string, refs []string) error {
	return &ConflictError{Msg: fmt.Sprintf("%s %s %s: still used by %s", res.Title, changeKey(res, old), what, strings.Join(refs, ", "))}
}

// refuseRenameIfReferenced refuses a change of a column others refer to
// (an extension's number, a trunk's name): references are never carried
// to a new key silently, and never left dangling.
func (ts *txStore) refuseRenameIfReferenced(ctx context.Context, res *Resource, o Owner, old, patch Record) error {
	var changed []string
	for _, c := range ts.reg.refCols[res.Name] {
		if v, ok := patch[c]; ok && refKeyString(v) != refKeyString(old[c]) {
			changed = append(changed, c)
		}
	}
	if len(changed) == 0 {
		return nil
	}
	refs, err := ts.referrers(ctx, res, o, old, changed)
	if err != nil || len(refs) == 0 {
		return err
	}
	return referencedError(res, old, "cannot change "+strings.Join(changed, ", "), refs)
}

// backfillReferences records the references of every existing object
// (once, when the refs table is created).
func (ts *txStore) backfillReferences(ctx context.Context) error {
	s := ts.Store
	for _, res := range s.reg.Resources() {
		if res.Custom() {
			continue
		}
		owners, err := s.ownersOf(ctx, ts, res)
		if err != nil {
			return err
		}
		for _, o := range owners {
			where, args := ownerWhere(res, o)
			recs, err := s.queryRecords(ctx, ts.tx, res, "SELECT "+strings.Join(s.columns(res), ", ")+" FROM "+res.Table+" WHERE "+where, args...)
			if err != nil {
				return fmt.Errorf("backfill references of %s: %w", res.Name, err)
			}
			for _, rec := range recs {
				if err := ts.saveRefs(ctx, res, o, changeKey(res, rec), rec); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// ownersOf lists the owners a resource's rows belong to (every tenant for
// tenant resources).
func (s *Store) ownersOf(ctx context.Context, ts *txStore, res *Resource) ([]Owner, error) {
	if res.Scope != TenantScope {
		return []Owner{{}}, nil
	}
	var rows []struct {
		ID     int64  `db:"id"`
		Tenant string `db:"tenant"`
	}
	if err := ts.tx.SelectContext(ctx, &rows, "SELECT id, tenant FROM tenants"); err != nil {
		return nil, fmt.Errorf("backfill references: %w", s.dialect.translate(err))
	}
	out := make([]Owner, len(rows))
	for i, r := range rows {
		out[i] = Owner{TenantID: r.ID, Tenant: r.Tenant}
	}
	return out, nil
}

package models

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/switchboard/switchboard/internal/changes"
)

// Owner is the tenant a tenant-scoped request works in (zero for platform
// resources). Every query on tenant data filters by its ID.
type Owner struct {
	TenantID int64
	Tenant   string
}

// Page selects a window of a list.
type Page struct {
	Limit, Offset int
	// Only, when non-nil, restricts a list to these keys (the tenants a
	// scoped caller may see).
	Only []string
	// Query searches, filters and sorts the list (resources with a
	// Listing; ParseListQuery).
	Query ListQuery
}

// querier is what both *sqlx.DB and *sqlx.Tx offer (the store's own
// queries; other packages get a Querier).
type querier interface {
	sqlx.ExtContext
	GetContext(ctx context.Context, dest any, query string, args ...any) error
	SelectContext(ctx context.Context, dest any, query string, args ...any) error
}

func (s *Store) columns(res *Resource) []string {
	var cols []string
	if res.HasID() || res.Singleton {
		cols = append(cols, "id")
	}
	for _, f := range res.Fields {
		if f.Stored() {
			cols = append(cols, f.Name)
		}
	}
	return append(cols, "created_at", "updated_at")
}

// where builds the owner filter for a resource.
func ownerWhere(res *Resource, o Owner) (string, []any) {
	if res.Scope == TenantScope {
		return "tenant_id = ?", []any{o.TenantID}
	}
	return "1=1", nil
}

func keyArg(res *Resource, key string) (any, error) {
	if res.KeyField() != "id" {
		return key, nil
	}
	id, err := strconv.ParseInt(key, 10, 64)
	if err != nil || id <= 0 {
		return nil, ErrNotFound
	}
	return id, nil
}

// List returns one page of a resource's objects in a stable order and the total.
func (s *Store) List(ctx context.Context, res *Resource, o Owner, p Page) ([]Record, int, error) {
	where, args := ownerWhere(res, o)
	if p.Only != nil {
		if len(p.Only) == 0 {
			return []Record{}, 0, nil
		}
		where += " AND " + res.KeyField() + " IN (?" + strings.Repeat(",?", len(p.Only)-1) + ")"
		for _, k := range p.Only {
			args = append(args, k)
		}
	}
	where, args = p.Query.where(res, where, args)
	var total int
	if err := s.db.GetContext(ctx, &total, "SELECT COUNT(*) FROM "+res.Table+" WHERE "+where, args...); err != nil {
		return nil, 0, fmt.Errorf("count %s: %w", res.Name, s.dialect.translate(err))
	}
	order := res.Order
	if order == "" {
		order = res.KeyField()
	}
	if order != "id" && res.HasID() {
		order += ", id"
	}
	order = p.Query.order(res, order)
	q := "SELECT " + strings.Join(s.columns(res), ", ") + " FROM " + res.Table + " WHERE " + where +
		" ORDER BY " + order + " LIMIT ? OFFSET ?"
	recs, err := s.queryRecords(ctx, s.db, res, q, append(args, p.Limit, p.Offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("list %s: %w", res.Name, err)
	}
	for _, rec := range recs {
		s.output(res, o, rec)
	}
	return recs, total, nil
}

// Get returns one object by its key.
func (s *Store) Get(ctx context.Context, res *Resource, o Owner, key string) (Record, error) {
	rec, err := s.getRow(ctx, s.db, res, o, key)
	if err != nil {
		return nil, err
	}
	s.output(res, o, rec)
	return rec, nil
}

func (s *Store) getRow(ctx context.Context, q querier, res *Resource, o Owner, key string) (Record, error) {
	where, args := ownerWhere(res, o)
	if !res.Singleton {
		arg, err := keyArg(res, key)
		if err != nil {
			return nil, err
		}
		where += " AND " + res.KeyField() + " = ?"
		args = append(args, arg)
	}
	recs, err := s.queryRecords(ctx, q, res, "SELECT "+strings.Join(s.columns(res), ", ")+" FROM "+res.Table+" WHERE "+where, args...)
	if err != nil {
		return nil, fmt.Errorf("get %s %q: %w", res.Name, key, err)
	}
	if len(recs) == 0 {
		return nil, ErrNotFound
	}
	return recs[0], nil
}

func (s *Store) queryRecords(ctx context.Context, q querier, res *Resource, query string, args ...any) ([]Record, error) {
	rows, err := q.QueryxContext(ctx, query, args...)
	if err != nil {
		return nil, s.dialect.translate(err)
	}
	defer rows.Close()
	cols := s.columns(res)
	out := []Record{}
	for rows.Next() {
		vals, err := rows.SliceScan()
		if err != nil {
			return nil, err
		}
		rec := make(Record, len(cols))
		for i, c := range cols {
			switch c {
			case "id":
				rec["id"], err = asInt64(vals[i])
			case "created_at", "updated_at":
				rec[c] = asString(vals[i])
			default:
				rec[c], err = fromColumn(res.Field(c), vals[i])
			}
			if err != nil {
				return nil, fmt.Errorf("read %s.%s: %w", res.Table, c, err)
			}
		}
		out = append(out, rec)
	}
	return out, rows.Err()
}

// output removes what a read must not show (secrets) and adds derived fields.
func (s *Store) output(res *Resource, o Owner, rec Record) {
	for _, f := range res.Fields {
		switch {
		case f.Masked && rec[f.Name] != nil:
			rec[f.Name] = s.mask(rec[f.Name])
		case f.Secret != NotSecret:
			delete(rec, f.Name)
		}
	}
	if !res.HasID() {
		delete(rec, "id")
	}
	if h, ok := res.Hooks.(outputter); ok {
		h.output(o, rec)
	}
	if h, ok := res.Hooks.(storeOutputter); ok {
		h.outputStore(s, rec)
	}
}

// Create validates input and stores a new object. The answer includes the
// secrets it was given or generated, once.
func (s *Store) Create(ctx context.Context, res *Resource, o Owner, input map[string]any) (Record, error) {
	region, err := s.phoneRegion(ctx, res, o, "", input)
	if err != nil {
		return nil, err
	}
	rec, err := ValidateIn(res, input, Create, region)
	if err != nil {
		return nil, err
	}
	if err := s.reg.checkRendered(res, rec); err != nil {
		return nil, err
	}
	undoAudio, err := s.takeAudio(ctx, res, o, rec)
	if err != nil {
		return nil, err
	}
	var out Record
	err = s.write(ctx, func(ts *txStore) error {
		if h, ok := res.Hooks.(beforeSaver); ok {
			if err := h.beforeSave(ctx, ts, o, nil, rec); err != nil {
				return err
			}
		}
		id, err := ts.insertRow(ctx, res, o, rec)
		if err != nil {
			return err
		}
		if h, ok := res.Hooks.(afterCreator); ok {
			withID := rec
			if res.HasID() {
				withID = merged(rec, Record{"id": id})
			}
			if err := h.afterCreate(ctx, ts, o, withID); err != nil {
				return err
			}
		}
		out, err = s.getRow(ctx, ts.tx, res, o, rowKey(res, rec, id))
		if err != nil {
			return err
		}
		return ts.record(res, o, changes.Create, changeKey(res, out), nil, out)
	})
	if err != nil || IsDryRun(ctx) {
		undoAudio()
	}
	if err != nil {
		return nil, err
	}
	secrets := map[string]any{}
	for _, f := range res.Fields {
		if (f.Secret == Encrypted || f.Secret == Digest) && rec[f.Name] != nil && !f.Masked {
			secrets[f.Name] = rec[f.Name]
		}
	}
	for _, f := range res.CreateAnswer {
		if v, ok := rec[f.Name]; ok {
			secrets[f.Name] = v
		}
	}
	s.output(res, o, out)
	for k, v := range secrets {
		out[k] = v
	}
	if h, ok := res.Hooks.(revealer); ok {
		h.reveal(s, rec, out)
	}
	return out, nil
}

// rowKey is the path key of a row just inserted with id.
func rowKey(res *Resource, rec Record, id int64) string {
	if res.KeyField() == "id" {
		return strconv.FormatInt(id, 10)
	}
	return fmt.Sprint(rec[res.KeyField()])
}

// create inserts a validated record inside a hook's transaction and
// records the change (default feature codes, singletons).
func (ts *txStore) create(ctx context.Context, res *Resource, o Owner, rec Record) error {
	id, err := ts.insertRow(ctx, res, o, rec)
	if err != nil {
		return err
	}
	return ts.recordCreate(ctx, res, o, rec, id)
}

// recordCreate records the creation of the row just inserted with id.
func (ts *txStore) recordCreate(ctx context.Context, res *Resource, o Owner, rec Record, id int64) error {
	out, err := ts.getRow(ctx, ts.tx, res, o, rowKey(res, rec, id))
	if err != nil {
		return err
	}
	return ts.record(res, o, changes.Create, changeKey(res, out), nil, out)
}

// insertRow writes rec (already validated) with its number-plan entries and
// checked references; it returns the new id.
func (ts *txStore) insertRow(ctx context.Context, res *Resource, o Owner, rec Record) (int64, error) {
	s, tx := ts.Store, ts.tx
	if !ts.cloning {
		if err := ts.checkRefs(ctx, res, o, rec); err != nil {
			return 0, err
		}
	}
	if err := ts.checkTenantLimit(ctx, res, o); err != nil {
		return 0, err
	}
	stamp := now()
	var cols []string
	var args []any
	if res.Scope == TenantScope {
		cols, args = append(cols, "tenant_id"), append(args, o.TenantID)
	}
	for _, f := range res.Fields {
		if !f.Stored() {
			continue
		}
		v, err := s.toColumn(f, rec[f.Name])
		if err != nil {
			return 0, err
		}
		cols, args = append(cols, f.Name), append(args, v)
	}
	cols, args = append(cols, "created_at", "updated_at"), append(args, stamp, stamp)
	q := "INSERT INTO " + res.Table + " (" + strings.Join(cols, ", ") + ") VALUES (?" + strings.Repeat(", ?", len(cols)-1) + ")"
	r, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("create %s: %w", res.Title, duplicateOf(res, rec, s.dialect.translate(err)))
	}
	id, err := r.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("create %s: %w", res.Title, err)
	}
	key := rowKey(res, rec, id)
	if err := s.claimNumbers(ctx, tx, res, o, key, nil, rec); err != nil {
		return 0, err
	}
	withID := rec
	if res.HasID() || res.Singleton {
		withID = merged(rec, Record{"id": id})
	}
	if err := ts.saveRefs(ctx, res, o, "", withID); err != nil {
		return 0, err
	}
	return id, nil
}

// Update applies any subset of fields to an object.
func (s *Store) Update(ctx context.Context, res *Resource, o Owner, key string, input map[string]any) (Record, error) {
	region, err := s.phoneRegion(ctx, res, o, key, input)
	if err != nil {
		return nil, err
	}
	patch, err := ValidateIn(res, input, Update, region)
	if err != nil {
		return nil, err
	}
	if err := s.reg.checkRendered(res, patch); err != nil {
		return nil, err
	}
	var out Record
	err = s.write(ctx, func(ts *txStore) error {
		tx := ts.tx
		old, err := s.getRow(ctx, tx, res, o, key)
		if err != nil {
			return err
		}
		if h, ok := res.Hooks.(beforeSaver); ok {
			if err := h.beforeSave(ctx, ts, o, old, patch); err != nil {
				return err
			}
		}
		if err := ts.checkRefs(ctx, res, o, patch); err != nil {
			return err
		}
		if err := ts.refuseRenameIfReferenced(ctx, res, o, old, patch); err != nil {
			return err
		}
		var sets []string
		var args []any
		for _, f := range res.Fields {
			v, ok := patch[f.Name]
			if !ok || !f.Stored() {
				continue
			}
			cv, err := s.toColumn(f, v)
			if err != nil {
				return err
			}
			sets, args = append(sets, f.Name+" = ?"), append(args, cv)
		}
		sets, args = append(sets, "updated_at = ?"), append(args, now())
		where, wargs := ownerWhere(res, o)
		idArg := old["id"]
		if !res.HasID() && !res.Singleton {
			where += " AND " + res.KeyField() + " = ?"
			idArg = old[res.KeyField()]
		} else {
			where += " AND id = ?"
		}
		if _, err := tx.ExecContext(ctx, "UPDATE "+res.Table+" SET "+strings.Join(sets, ", ")+" WHERE "+where, append(append(args, wargs...), idArg)...); err != nil {
			return fmt.Errorf("update %s %q: %w", res.Title, key, duplicateOf(res, merged(old, patch), s.dialect.translate(err)))
		}
		newKey := key
		if v, ok := patch[res.KeyField()]; ok && res.KeyField() != "id" {
			newKey = fmt.Sprint(v)
		}
		if err := s.claimNumbers(ctx, tx, res, o, newKey, old, patch); err != nil {
			return err
		}
		if out, err = s.getRow(ctx, tx, res, o, newKey); err != nil {
			return err
		}
		if err := ts.saveRefs(ctx, res, o, changeKey(res, old), out); err != nil {
			return err
		}
		return ts.record(res, o, changes.Update, changeKey(res, out), old, out)
	})
	if err != nil {
		return nil, err
	}
	s.output(res, o, out)
	return out, nil
}

// Delete removes an object; one still referenced answers ErrReferenced.
func (s *Store) Delete(ctx context.Context, res *Resource, o Owner, key string) error {
	return s.write(ctx, func(ts *txStore) error {
		tx := ts.tx
		old, err := s.getRow(ctx, tx, res, o, key)
		if err != nil {
			return err
		}
		refs, err := ts.referrers(ctx, res, o, old, nil)
		if err != nil {
			return err
		}
		if len(refs) > 0 {
			return referencedError(res, old, "cannot be deleted", refs)
		}
		if h, ok := res.Hooks.(beforeDeleter); ok {
			if err := h.beforeDelete(ctx, ts, o, old); err != nil {
				return err
			}
		}
		where, args := ownerWhere(res, o)
		col := res.KeyField()
		if res.HasID() || res.Singleton {
			col = "id"
		}
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+res.Table+" WHERE "+where+" AND "+col+" = ?", append(args, old[col])...); err != nil {
			return fmt.Errorf("delete %s %q: %w", res.Title, key, s.dialect.translate(err))
		}
		if err := s.releaseNumbers(ctx, tx, res, o, old); err != nil {
			return err
		}
		if err := ts.dropRefs(ctx, res, o, changeKey(res, old)); err != nil {
			return err
		}
		return ts.record(res, o, changes.Delete, changeKey(res, old), old, nil)
	})
}

// Records returns a tenant's (or the platform's) objects of a resource for
// rendering FreeSWITCH configuration: encrypted secrets are opened (the XML
// needs SIP secrets and trunk passwords), hashed ones are dropped. where
// filters on stored columns by equality. Never hand these to API clients.
func (s *Store) Records(ctx context.Context, res *Resource, o Owner, where map[string]any) ([]Record, error) {
	cond, args := ownerWhere(res, o)
	keys := make([]string, 0, len(where))
	for k := range where {
		if res.Field(k) == nil && k != "id" {
			return nil, fmt.Errorf("records %s: unknown column %q", res.Name, k)
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cond += " AND " + k + " = ?"
		args = append(args, where[k])
	}
	recs, err := s.queryRecords(ctx, s.db, res, "SELECT "+strings.Join(s.columns(res), ", ")+" FROM "+res.Table+" WHERE "+cond+" ORDER BY id", args...)
	if err != nil {
		return nil, fmt.Errorf("records %s: %w", res.Name, err)
	}
	for _, rec := range recs {
		for _, f := range res.Fields {
			switch {
			case f.Secret == Encrypted && rec[f.Name] != nil:
				plain, err := s.sealer.Open(rec[f.Name].(string))
				if err != nil {
					return nil, fmt.Errorf("records %s.%s: %w", res.Name, f.Name, err)
				}
				rec[f.Name] = plain
			case f.Secret == Hashed || f.Secret == Digest:
				delete(rec, f.Name)
			}
		}
		if h, ok := res.Hooks.(outputter); ok {
			h.output(o, rec)
		}
	}
	return recs, nil
}

package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/switchboard/switchboard/internal/changes"
)

// Tenant and reseller limits (resources.md §1.1, §1.4). Each is checked in
// the transaction of the write it limits, after locking the row that holds
// it (the tenant for its objects, the reseller for its tenants), so two
// concurrent creates at the limit cannot both pass the count. Lowering a
// limit below what exists is allowed: existing objects stay, new ones are
// refused until the count is under the limit again. 0 means unlimited.
// The counts are locking reads too: under MySQL's repeatable read a plain
// read would see the transaction's first snapshot, taken before a
// concurrent create that committed while this one waited for the lock.

// tenantLimits maps a tenant resource to the tenant field that caps how
// many of it the tenant may have.
var tenantLimits = map[string]string{
	"extensions":       "max_extensions",
	"queues":           "max_queues",
	"ivr_menus":        "max_ivr_menus",
	"conference_rooms": "max_conference_rooms",
}

// LimitReachedEvent is the system event of a write refused by a limit.
const LimitReachedEvent = "tenant.limit_reached"

// LimitError is a write refused because it would pass a tenant's or a
// reseller's limit. The HTTP layer answers 422 with Code.
type LimitError struct {
	Tenant   string // the tenant whose write was refused
	Reseller string // set when the limit is the reseller's
	Limit    string // the limit's field name
	Value    int64  // the limit
	Resource string // what the write would have created or raised
	// Need is what the write would have made the reseller's total (reseller
	// sums only).
	Need int64
}

// Code is the error's machine code.
func (e *LimitError) Code() string {
	if e.Reseller != "" {
		return "reseller_limit_reached"
	}
	return "tenant_limit_reached"
}

func (e *LimitError) Error() string {
	if e.Reseller == "" {
		return fmt.Sprintf("tenant %s has reached its limit of %d %s (%s = %d)", e.Tenant, e.Value, e.Resource, e.Limit, e.Value)
	}
	if e.Limit == "max_tenants" {
		return fmt.Sprintf("reseller %s has reached its limit of %d tenants (max_tenants = %d)", e.Reseller, e.Value, e.Value)
	}
	return fmt.Sprintf("tenant %s would bring reseller %s's %s to %s, over %s = %d (a tenant with 0 = unlimited counts as over any total)",
		e.Tenant, e.Reseller, e.Resource, need(e.Need), e.Limit, e.Value)
}

func need(n int64) string {
	if n < 0 {
		return "unlimited"
	}
	return fmt.Sprint(n)
}

// checkTenantLimit refuses creating one more res in tenant o when the
// tenant's limit for it is reached. It locks the tenant row first.
func (ts *txStore) checkTenantLimit(ctx context.Context, res *Resource, o Owner) error {
	field, ok := tenantLimits[res.Name]
	if !ok || ts.cloning {
		return nil
	}
	var limit sql.NullInt64
	if err := ts.tx.GetContext(ctx, &limit, "SELECT "+field+" FROM tenants WHERE id = ?"+ts.dialect.forUpdate(), o.TenantID); err != nil {
		return fmt.Errorf("%s of tenant %s: %w", field, o.Tenant, ts.dialect.translate(err))
	}
	if limit.Int64 <= 0 {
		return nil
	}
	var n int64
	if err := ts.tx.GetContext(ctx, &n, "SELECT COUNT(*) FROM "+res.Table+" WHERE tenant_id = ?"+ts.dialect.forUpdate(), o.TenantID); err != nil {
		return fmt.Errorf("count %s of tenant %s: %w", res.Name, o.Tenant, ts.dialect.translate(err))
	}
	if n >= limit.Int64 {
		return &LimitError{Tenant: o.Tenant, Limit: field, Value: limit.Int64, Resource: res.Name}
	}
	return nil
}

// LimitRefuses reports whether operation op ("create", "update") on res
// can be refused by a tenant's or reseller's limit (a LimitError), for the
// API's documentation.
func LimitRefuses(res *Resource, op string) bool {
	if res == tenantsResource {
		return op == "create" || op == "update"
	}
	_, ok := tenantLimits[res.Name]
	return ok && op == "create"
}

// resellerSums are the tenant limits a reseller's totals cap.
var resellerSums = [][2]string{
	{"max_extensions", "max_extensions_total"},
	{"max_concurrent_calls", "max_concurrent_calls_total"},
}

// checkResellerLimits refuses a tenant create or update that would pass
// its reseller's limits: joining a reseller (created with it or moved to
// it) counts against max_tenants; a tenant's max_extensions and
// max_concurrent_calls, when they are new to the reseller or raised, must
// keep the sum over the reseller's tenants within its totals. A tenant
// limit of 0 (unlimited) under a reseller with a total is over it.
func (ts *txStore) checkResellerLimits(ctx context.Context, old, patch Record) error {
	if old != nil && !touches(patch, "reseller_id", "max_extensions", "max_concurrent_calls") {
		return nil
	}
	rec := merged(old, patch)
	if rec["reseller_id"] == nil {
		return nil
	}
	rid, err := asInt64(rec["reseller_id"])
	if err != nil {
		return FieldError("reseller_id", "must be a reseller id")
	}
	var r struct {
		Name         string        `db:"name"`
		MaxTenants   sql.NullInt64 `db:"max_tenants"`
		MaxExtTotal  sql.NullInt64 `db:"max_extensions_total"`
		MaxCallTotal sql.NullInt64 `db:"max_concurrent_calls_total"`
	}
	if err := ts.tx.GetContext(ctx, &r, "SELECT name, max_tenants, max_extensions_total, max_concurrent_calls_total FROM resellers WHERE id = ?"+ts.dialect.forUpdate(), rid); err != nil {
		if errors.Is(ts.dialect.translate(err), ErrNotFound) {
			return nil // checkRefs names the missing reseller
		}
		return fmt.Errorf("reseller %d: %w", rid, ts.dialect.translate(err))
	}
	tenant, _ := rec["tenant"].(string)
	oldRID, oldErr := asInt64(old["reseller_id"])
	joining := old == nil || old["reseller_id"] == nil || oldErr != nil || oldRID != rid
	// The tenant itself is not among the others (it exists already when
	// an update or a clone's copied limits are checked).
	others := "reseller_id = ? AND tenant <> ?"
	args := []any{rid, tenant}
	if joining && r.MaxTenants.Int64 > 0 {
		var n int64
		if err := ts.tx.GetContext(ctx, &n, "SELECT COUNT(*) FROM tenants WHERE "+others+ts.dialect.forUpdate(), args...); err != nil {
			return fmt.Errorf("tenants of reseller %s: %w", r.Name, ts.dialect.translate(err))
		}
		if n >= r.MaxTenants.Int64 {
			return &LimitError{Tenant: tenant, Reseller: r.Name, Limit: "max_tenants", Value: r.MaxTenants.Int64, Resource: "tenants"}
		}
	}
	totals := map[string]int64{"max_extensions_total": r.MaxExtTotal.Int64, "max_concurrent_calls_total": r.MaxCallTotal.Int64}
	for _, pair := range resellerSums {
		field, total := pair[0], totals[pair[1]]
		if total <= 0 {
			continue
		}
		want, _ := asInt64(rec[field])
		if !joining {
			_, changed := patch[field]
			was, _ := asInt64(old[field])
			if !changed || !raised(was, want) {
				continue
			}
		}
		var sum sql.NullInt64
		var unlimited sql.NullInt64
		q := "SELECT SUM(" + field + "), SUM(CASE WHEN COALESCE(" + field + ", 0) = 0 THEN 1 ELSE 0 END) FROM tenants WHERE " + others + ts.dialect.forUpdate()
		if err := ts.tx.QueryRowxContext(ctx, q, args...).Scan(&sum, &unlimited); err != nil {
			return fmt.Errorf("%s of reseller %s: %w", field, r.Name, ts.dialect.translate(err))
		}
		if want <= 0 || unlimited.Int64 > 0 {
			return &LimitError{Tenant: tenant, Reseller: r.Name, Limit: pair[1], Value: total, Resource: field, Need: -1}
		}
		if sum.Int64+want > total {
			return &LimitError{Tenant: tenant, Reseller: r.Name, Limit: pair[1], Value: total, Resource: field, Need: sum.Int64 + want}
		}
	}
	return nil
}

// touches reports whether patch sets any of fields.
func touches(patch Record, fields ...string) bool {
	for _, f := range fields {
		if _, ok := patch[f]; ok {
			return true
		}
	}
	return false
}

// raised reports whether a limit went up (0 is unlimited, above all).
func raised(was, now int64) bool {
	switch {
	case was <= 0:
		return false
	case now <= 0:
		return true
	}
	return now > was
}

// limitEventWindow is how often a tenant.limit_reached event is emitted
// for one limit: a client hammering it yields one event a window.
const limitEventWindow = time.Minute

// noteLimit emits the system event of a refused write, at most once per
// limit (the tenant's, or the reseller's) and window across replicas: the
// window's row in limit_event_windows is inserted with the event, and a
// refusal that finds it emits nothing. Failing to emit is the caller's to
// log; the refusal stands either way.
func (s *Store) noteLimit(ctx context.Context, le *LimitError) error {
	bucket := "tenant:" + le.Tenant + ":" + le.Limit
	if le.Reseller != "" {
		bucket = "reseller:" + le.Reseller + ":" + le.Limit
	}
	window := time.Now().Unix() / int64(limitEventWindow/time.Second)
	data := map[string]any{"tenant": le.Tenant, "limit": le.Limit, "value": le.Value, "resource": le.Resource,
		"window_seconds": int(limitEventWindow / time.Second)}
	if le.Reseller != "" {
		data["reseller"] = le.Reseller
	}
	ev, err := NewEvent(LimitReachedEvent, "", bucket, data)
	if err != nil {
		return err
	}
	return s.withEvents(ctx, func(tx *sqlx.Tx) ([]changes.Change, error) {
		if _, err := tx.ExecContext(ctx, "DELETE FROM limit_event_windows WHERE window_start < ?", window-60); err != nil {
			return nil, fmt.Errorf("limit event windows: %w", s.dialect.translate(err))
		}
		r, err := tx.ExecContext(ctx, s.dialect.insertIgnore()+" INTO limit_event_windows (bucket, window_start) VALUES (?, ?)", bucket, window)
		if err != nil {
			return nil, fmt.Errorf("limit event window: %w", s.dialect.translate(err))
		}
		if n, err := r.RowsAffected(); err != nil || n == 0 {
			return nil, err
		}
		return []changes.Change{ev}, nil
	})
}

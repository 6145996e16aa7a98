package models

import (
	"context"
	"fmt"
	"strings"
)

// Hooks of the routing resources (resources.md §1.7, §2.6–§2.8, §2.12,
// §2.19): cross-object rules a field declaration cannot express, checked
// inside the write transaction so two writers cannot both pass.

type (
	inboundRouteHooks     struct{}
	outboundRouteHooks    struct{}
	routingConditionHooks struct{}
	didHooks              struct{}
	emergencyLocHooks     struct{}
	officeModeHooks       struct{}
)

var (
	_ beforeSaver = inboundRouteHooks{}
	_ cloner      = inboundRouteHooks{}
	_ beforeSaver = outboundRouteHooks{}
	_ beforeSaver = routingConditionHooks{}
	_ beforeSaver = didHooks{}
	_ beforeSaver = emergencyLocHooks{}
	_ beforeSaver = officeModeHooks{}
	_ cloner      = officeModeHooks{}
)

// count runs a COUNT(*) query in the transaction.
func (ts *txStore) count(ctx context.Context, what, query string, args ...any) (int, error) {
	var n int
	if err := ts.tx.GetContext(ctx, &n, query, args...); err != nil {
		return 0, fmt.Errorf("check %s: %w", what, ts.dialect.translate(err))
	}
	return n, nil
}

func (inboundRouteHooks) beforeSave(ctx context.Context, ts *txStore, o Owner, old, patch Record) error {
	rec := merged(old, patch)
	did, _ := rec["did"].(string)
	if did == "" {
		if enabled, _ := rec["enabled"].(bool); enabled {
			return FieldError("did", "an enabled inbound route needs a DID")
		}
		return nil
	}
	if _, changed := patch["did"]; changed {
		n, err := ts.count(ctx, "did", "SELECT COUNT(*) FROM dids WHERE number = ? AND tenant = ?", did, o.Tenant)
		if err != nil {
			return err
		}
		if n == 0 {
			return FieldError("did", "DID %s is not assigned to this tenant", did)
		}
	}
	if enabled, _ := rec["enabled"].(bool); !enabled {
		return nil
	}
	// Several enabled routes may share a DID only when they tell callers
	// apart (caller_match); two that claim the same calls are a conflict.
	match, _ := rec["caller_match"].(string)
	q := "SELECT COUNT(*) FROM inbound_routes WHERE tenant_id = ? AND did = ? AND enabled = 1 AND COALESCE(caller_match, '') = ?"
	args := []any{o.TenantID, did, match}
	if old != nil {
		q += " AND id <> ?"
		args = append(args, old["id"])
	}
	n, err := ts.count(ctx, "did", q, args...)
	if err != nil {
		return err
	}
	if n > 0 {
		return FieldError("did", "another enabled inbound route already takes calls to %s", did)
	}
	return nil
}

// cloneRecord: a cloned route may not take the source tenant's calls.
func (inboundRouteHooks) cloneRecord(rec Record) {
	rec["did"] = nil
	rec["enabled"] = false
}

func (outboundRouteHooks) beforeSave(ctx context.Context, ts *txStore, o Owner, old, patch Record) error {
	rec := merged(old, patch)
	if rec["callerid_policy"] == "fixed" && str(rec["callerid_fixed"]) == "" {
		return FieldError("callerid_fixed", "required when callerid_policy is fixed")
	}
	trunks, ok := patch["trunks"].([]any)
	if !ok {
		return nil
	}
	for _, t := range trunks {
		name, _ := t.(string)
		var allowed []Record
		recs, err := ts.queryRecords(ctx, ts.tx, sipTrunksResource, "SELECT "+strings.Join(ts.columns(sipTrunksResource), ", ")+" FROM sip_trunks WHERE name = ?", name)
		if err != nil {
			return fmt.Errorf("check trunk %q: %w", name, err)
		}
		allowed = recs
		if len(allowed) == 0 {
			return FieldError("trunks", "SIP trunk %s does not exist", name)
		}
		list, _ := allowed[0]["tenants"].([]any)
		if len(list) == 0 {
			continue
		}
		found := false
		for _, v := range list {
			if s, _ := v.(string); strings.EqualFold(s, o.Tenant) {
				found = true
			}
		}
		if !found {
			return FieldError("trunks", "SIP trunk %s is not available to this tenant", name)
		}
	}
	return nil
}

func (routingConditionHooks) beforeSave(ctx context.Context, ts *txStore, o Owner, old, patch Record) error {
	rec := merged(old, patch)
	switch rec["kind"] {
	case "schedule":
		if rec["schedule_id"] == nil {
			return FieldError("schedule_id", "required for kind schedule")
		}
	case "office_mode":
		if l, _ := rec["office_modes"].([]any); len(l) == 0 {
			return FieldError("office_modes", "required (non-empty) for kind office_mode")
		}
	case "caller":
		if l, _ := rec["caller_prefixes"].([]any); len(l) == 0 {
			return FieldError("caller_prefixes", "required (non-empty) for kind caller")
		}
	}
	return nil
}

func (didHooks) beforeSave(ctx context.Context, ts *txStore, _ Owner, old, patch Record) error {
	rec := merged(old, patch)
	route := rec["inbound_route_id"]
	if route == nil {
		return nil
	}
	tenant := str(rec["tenant"])
	if tenant == "" {
		return FieldError("inbound_route_id", "an unassigned DID has no inbound route")
	}
	n, err := ts.count(ctx, "inbound_route_id",
		"SELECT COUNT(*) FROM inbound_routes r JOIN tenants t ON t.id = r.tenant_id WHERE r.id = ? AND t.tenant = ?", route, tenant)
	if err != nil {
		return err
	}
	if n == 0 {
		return FieldError("inbound_route_id", "inbound route %v does not belong to tenant %s", route, tenant)
	}
	return nil
}

// beforeSave keeps at most one default location per tenant: setting one
// clears the flag on the others (the newest choice wins).
func (emergencyLocHooks) beforeSave(ctx context.Context, ts *txStore, o Owner, old, patch Record) error {
	if def, _ := patch["is_default"].(bool); !def {
		return nil
	}
	q := "UPDATE emergency_locations SET is_default = 0 WHERE tenant_id = ?"
	args := []any{o.TenantID}
	if old != nil {
		q += " AND id <> ?"
		args = append(args, old["id"])
	}
	if _, err := ts.tx.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("clear default emergency location: %w", ts.dialect.translate(err))
	}
	return nil
}

func (officeModeHooks) beforeSave(_ context.Context, _ *txStore, _ Owner, old, patch Record) error {
	rec := merged(old, patch)
	if _, modeChanged := patch["mode"]; modeChanged && rec["mode"] == "auto" {
		if _, untilGiven := patch["until"]; !untilGiven {
			patch["until"] = nil // back to auto: a leftover end time means nothing
			rec["until"] = nil
		}
	}
	if str(rec["until"]) != "" && (rec["mode"] == "auto" || rec["mode"] == nil) {
		return FieldError("until", "only with a manual mode (day, night, holiday, break)")
	}
	return nil
}

// cloneRecord: a copied tenant starts following its schedule.
func (officeModeHooks) cloneRecord(rec Record) {
	rec["mode"] = "auto"
	rec["until"] = nil
}

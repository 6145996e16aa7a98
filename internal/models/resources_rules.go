package models

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboard/switchboard/internal/platform/avatar"
)

// Cross-field rules of the resources declared in resources_*.go,
// resources_collab.go and resources_crm.go ("X is required when Y is Z",
// "no cycles"): small data-driven hooks, so each declaration states its
// rules next to its fields instead of in a hand-written hook per resource.

// check inspects the whole object after a change (rec) and the change
// itself (patch); it returns a *ValidationError naming the field.
type check func(rec, patch Record) error

// rules is the Hooks value of resources whose rules span fields.
type rules struct {
	// name is the resource's own name, needed by the tree check.
	name string
	// tree names a self-reference (parent_id) that must not form a cycle.
	tree string
	// prepare normalises the patch before the checks (MAC separators).
	prepare func(old, patch Record)
	checks  []check
}

var _ beforeSaver = rules{}

func (r rules) beforeSave(ctx context.Context, ts *txStore, o Owner, old, patch Record) error {
	if r.prepare != nil {
		r.prepare(old, patch)
	}
	if err := checkTimezone("timezone", patch["timezone"]); err != nil {
		return err
	}
	rec := merged(old, patch)
	for _, c := range r.checks {
		if err := c(rec, patch); err != nil {
			return err
		}
	}
	if r.name == "" {
		return nil
	}
	if r.tree != "" && old != nil {
		return ts.checkNoCycle(ctx, ts.reg.Resource(r.name), o, r.tree, old["id"], patch[r.tree])
	}
	return nil
}

// checkNoCycle walks up from the new parent; meeting the object itself
// means the change would make it its own ancestor. A new object cannot be
// anyone's parent yet, so only updates are checked.
func (ts *txStore) checkNoCycle(ctx context.Context, res *Resource, o Owner, field string, id, parent any) error {
	where, args := ownerWhere(res, o)
	for range 1000 {
		if parent == nil {
			return nil
		}
		if parent == id {
			return FieldError(field, "would make a cycle")
		}
		var next *int64
		if err := ts.tx.GetContext(ctx, &next, "SELECT "+field+" FROM "+res.Table+" WHERE "+where+" AND id = ?", append(args, parent)...); err != nil {
			if err = ts.dialect.translate(err); errors.Is(err, ErrNotFound) {
				return nil // no cycle through a missing parent; the reference check names it (400)
			}
			return fmt.Errorf("check %s: %w", field, err)
		}
		if next == nil {
			return nil
		}
		parent = *next
	}
	return FieldError(field, "nesting is too deep")
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

// requireWhen makes need required when field has one of values; "*"
// matches any non-empty value, and an empty field makes need always
// required (a rule rather than a NOT NULL column, for clone-cleared refs).
func requireWhen(need, field string, values ...string) check {
	return func(rec, _ Record) error {
		if field != "" {
			v := fmt.Sprint(rec[field])
			if isEmpty(rec[field]) || !(contains(values, v) || contains(values, "*")) {
				return nil
			}
		}
		if !isEmpty(rec[need]) {
			return nil
		}
		if field == "" {
			return FieldError(need, "required")
		}
		return FieldError(need, "required when %s is %v", field, rec[field])
	}
}

// uniqueItems refuses two items of an object list with the same prop.
func uniqueItems(list, prop string) check {
	return func(_, patch Record) error {
		items, _ := patch[list].([]any)
		seen := map[string]bool{}
		for i, it := range items {
			m, _ := it.(map[string]any)
			k := fmt.Sprint(m[prop])
			if seen[k] {
				return FieldError(list, "item %d: %s %s is used twice", i, prop, k)
			}
			seen[k] = true
		}
		return nil
	}
}

// differentSecrets refuses a == b when both are given in the same write
// (stored secrets are sealed, so only given values can be compared).
func differentSecrets(a, b string) check {
	return func(_, patch Record) error {
		if va, ok := patch[a].(string); ok && va != "" && va == patch[b] {
			return FieldError(a, "must differ from %s", b)
		}
		return nil
	}
}

// intOneOf restricts an integer to a set (sample rates).
func intOneOf(field string, values ...int64) check {
	return func(_, patch Record) error {
		n, ok := patch[field].(int64)
		if !ok {
			return nil
		}
		for _, v := range values {
			if n == v {
				return nil
			}
		}
		return FieldError(field, "must be one of %v", values)
	}
}

// normaliseMAC stores MAC addresses as 12 lower-case hex digits, so the
// unique key sees 00:15:65:AA:BB:CC and 001565aabbcc as the same phone.
func normaliseMAC(_, patch Record) {
	if s, ok := patch["mac_address"].(string); ok {
		patch["mac_address"] = strings.ToLower(strings.NewReplacer(":", "", "-", "", ".", "").Replace(s))
	}
}

// randomPublicID is a click-to-call widget's embed id.
func randomPublicID() string { return randomString("abcdefghijkmnopqrstuvwxyz23456789", 20) }

// huntGroupRules: a cloned hunt group keeps only its external members
// (extensions belong to the source tenant's people).
type huntGroupRules struct{ rules }

var _ cloner = huntGroupRules{}

func (huntGroupRules) cloneRecord(rec Record) {
	members, _ := rec["members"].([]any)
	kept := []any{}
	for _, m := range members {
		if mm, ok := m.(map[string]any); ok && mm["type"] == "external" {
			kept = append(kept, m)
		}
	}
	rec["members"] = kept
}

// specialEndpointRules: SIP URI endpoints need the tenant's opt-in
// (allow_sip_uri_endpoints), a toll-fraud guard.
type specialEndpointRules struct{ rules }

func (r specialEndpointRules) beforeSave(ctx context.Context, ts *txStore, o Owner, old, patch Record) error {
	if err := r.rules.beforeSave(ctx, ts, o, old, patch); err != nil {
		return err
	}
	if merged(old, patch)["kind"] != "sip_uri" {
		return nil
	}
	n, err := ts.count(ctx, "tenant", "SELECT COUNT(*) FROM tenants WHERE id = ? AND allow_sip_uri_endpoints = 1", o.TenantID)
	if err != nil {
		return err
	}
	if n == 0 {
		return &RefusedError{Code: "sip_uri_not_allowed", Msg: "sip_uri endpoints are not allowed for this tenant: an administrator must set the tenant's allow_sip_uri_endpoints first"}
	}
	return nil
}

// incomingWebhookRules: the target channel must exist in the tenant and
// not be archived.
type incomingWebhookRules struct{ rules }

func (r incomingWebhookRules) beforeSave(ctx context.Context, ts *txStore, o Owner, old, patch Record) error {
	if err := r.rules.beforeSave(ctx, ts, o, old, patch); err != nil {
		return err
	}
	if pic, ok := patch["picture"].(string); ok && pic != "" {
		// Stored as a 256×256 PNG whatever was uploaded (resources.md §3.4).
		png, err := avatar.Normalize(pic)
		if err != nil {
			return FieldError("picture", "%s", err.Error())
		}
		patch["picture"] = png
	}
	if tok, ok := patch["token"].(string); ok && old == nil {
		patch["url"] = ts.webhookDisplayURL(tok)
		patch["message_count"] = int64(0)
		if who := actor(ctx); who != "" {
			patch["created_by"] = who
		}
	}
	ch, ok := patch["channel"].(string)
	if !ok {
		return nil
	}
	var archived []bool
	if err := ts.tx.SelectContext(ctx, &archived, "SELECT archived FROM chat_channels WHERE tenant_id = ? AND name = ?", o.TenantID, ch); err != nil {
		return fmt.Errorf("check channel: %w", ts.dialect.translate(err))
	}
	switch {
	case len(archived) == 0:
		return FieldError("channel", "chat channel %q does not exist in this tenant", ch)
	case archived[0]:
		return FieldError("channel", "chat channel %q is archived", ch)
	}
	return nil
}

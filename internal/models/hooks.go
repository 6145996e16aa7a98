package models

import (
	"context"
	"fmt"
	"time"
)

// Resources with behaviour beyond CRUD implement some of these one-method
// interfaces on the value in Resource.Hooks; the generic path finds them by
// type assertion and runs them inside the write transaction.
type (
	// beforeSaver checks or completes a record before insert (old == nil) or
	// update (patch holds only the changed fields).
	beforeSaver interface {
		beforeSave(ctx context.Context, ts *txStore, o Owner, old, patch Record) error
	}
	// afterCreator adds related rows after insert.
	afterCreator interface {
		afterCreate(ctx context.Context, ts *txStore, o Owner, rec Record) error
	}
	// beforeDeleter refuses or cleans up before delete.
	beforeDeleter interface {
		beforeDelete(ctx context.Context, ts *txStore, o Owner, old Record) error
	}
	// outputter adds derived, read-only fields to what a read returns.
	outputter interface {
		output(o Owner, rec Record)
	}
	// customRouter marks resources whose routes are hand-written.
	customRouter interface{ customRoutes() }
)

// customRoutes is the Hooks value of resources served by hand-written handlers.
type customRoutes struct{}

func (customRoutes) customRoutes() {}

var _ customRouter = customRoutes{}

// Custom reports whether the resource's routes are hand-written rather
// than generated CRUD.
func (r *Resource) Custom() bool {
	_, ok := r.Hooks.(customRouter)
	return ok
}

// merged returns old with patch applied, for checks that need the whole object.
func merged(old, patch Record) Record {
	out := Record{}
	for k, v := range old {
		out[k] = v
	}
	for k, v := range patch {
		out[k] = v
	}
	return out
}

// checkTimezone verifies an IANA zone name against Go's zone database.
func checkTimezone(field string, v any) error {
	s, _ := v.(string)
	if s == "" {
		return nil
	}
	if _, err := time.LoadLocation(s); err != nil {
		return FieldError(field, "unknown time zone %q", s)
	}
	return nil
}

// scheduleHooks checks time zones and period order.
type scheduleHooks struct{}

var _ beforeSaver = scheduleHooks{}

func (scheduleHooks) beforeSave(_ context.Context, _ *txStore, _ Owner, old, patch Record) error {
	if err := checkTimezone("timezone", patch["timezone"]); err != nil {
		return err
	}
	periods, _ := patch["open_periods"].([]any)
	for i, p := range periods {
		m := p.(map[string]any)
		if m["end"].(string) <= m["start"].(string) {
			return FieldError("open_periods", "item %d: end must be after start", i)
		}
	}
	holidays, _ := patch["holidays"].([]any)
	for i, h := range holidays {
		m := h.(map[string]any)
		if _, err := time.Parse("2006-01-02", m["date"].(string)); err != nil {
			return FieldError("holidays", "item %d: date is not a calendar date", i)
		}
		if end, ok := m["end_date"].(string); ok && end != "" && end < m["date"].(string) {
			return FieldError("holidays", "item %d: end_date is before date", i)
		}
	}
	return nil
}

// Permissions are the grants an API key can hold.
var Permissions = []string{
	"config.read", "config.write", "keys.manage", "calls.read", "calls.control",
	"messaging.send", "connect.post", "connect.agents", "incoming_webhooks.manage",
	"incoming_webhooks.manage_own",
}

// featureDefaults inserts the default star codes for a new tenant.
func (ts *txStore) featureDefaults(ctx context.Context, o Owner) error {
	for _, fc := range featureCodes {
		rec := Record{"feature": fc[0], "code": fc[1], "pin_required": false, "enabled": true, "description": ""}
		if err := ts.create(ctx, featureExtensionsResource, o, rec); err != nil {
			return fmt.Errorf("default feature code %s: %w", fc[0], err)
		}
	}
	return nil
}

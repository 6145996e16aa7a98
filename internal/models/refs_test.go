package models_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// TestQueueTargetedByInboundRouteCannotBeDeleted: the reference mechanism
// covers every destination type (here with the renderer's limit lifted,
// as it will be once queues render): deleting queue 601 while an inbound
// route sends calls to it answers 409 naming the route, and the route's
// deletion frees the queue.
func TestQueueTargetedByInboundRouteCannotBeDeleted(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		st.Registry().SetRenderedDestinations(models.DestinationTypes())
		ctx := t.Context()
		o := newTenant(t, st)
		queue := mustCreate(t, st, "queues", o, `{"name":"Support","number":"601"}`)
		route := mustCreate(t, st, "inbound_routes", o, `{"name":"main","enabled":false,"destination":{"type":"queue","target":"601"}}`)
		err := st.Delete(ctx, st.Registry().Resource("queues"), o, jsonID(queue))
		var ce *models.ConflictError
		if !errors.As(err, &ce) || !strings.Contains(ce.Msg, "inbound route main (destination)") {
			t.Fatalf("delete queue 601: %v, want 409 naming the inbound route", err)
		}
		if err := st.Delete(ctx, st.Registry().Resource("inbound_routes"), o, jsonID(route)); err != nil {
			t.Fatal(err)
		}
		if err := st.Delete(ctx, st.Registry().Resource("queues"), o, jsonID(queue)); err != nil {
			t.Fatalf("delete unreferenced queue: %v", err)
		}
	})
}

// TestReferencesBackfilledForExistingRows: rows written before the refs
// table existed get their references recorded by the migration's data
// step, so they are protected like new ones.
func TestReferencesBackfilledForExistingRows(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := t.Context()
		o := newTenant(t, st)
		mustCreate(t, st, "extensions", o, `{"name":"1001"}`)
		mustCreate(t, st, "hunt_groups", o, `{"name":"Sales","number":"600","members":[{"type":"extension","target":"1001"}]}`)
		// As if written by an older release.
		if _, err := st.Querier().ExecContext(context.Background(), "DELETE FROM refs WHERE tenant_id = ?", o.TenantID); err != nil {
			t.Fatal(err)
		}
		ext := st.Registry().Resource("extensions")
		if _, err := st.Update(ctx, ext, o, "1001", map[string]any{"first_name": "Ann"}); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Querier().ExecContext(context.Background(), "INSERT INTO pending_steps (name) VALUES ('backfill_refs')"); err != nil {
			t.Fatal(err)
		}
		if err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		var ce *models.ConflictError
		if err := st.Delete(ctx, ext, o, "1001"); !errors.As(err, &ce) || !strings.Contains(ce.Msg, "hunt group Sales (members)") {
			t.Fatalf("delete after backfill: %v, want 409 naming the hunt group", err)
		}
		var n int
		if err := st.Querier().GetContext(context.Background(), &n, "SELECT COUNT(*) FROM pending_steps"); err != nil || n != 0 {
			t.Fatalf("pending steps left: %d (%v)", n, err)
		}
	})
}

// TestTenantDeleteRemovesItsReferences: deleting a tenant with referencing
// objects succeeds and leaves no reference rows behind.
func TestTenantDeleteRemovesItsReferences(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := t.Context()
		o := newTenant(t, st)
		mustCreate(t, st, "extensions", o, `{"name":"1001"}`)
		mustCreate(t, st, "pickup_groups", o, `{"name":"floor","members":["1001"]}`)
		if err := st.Delete(ctx, st.Registry().Resource("tenants"), models.Owner{}, o.Tenant); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := st.Querier().GetContext(context.Background(), &n, "SELECT COUNT(*) FROM refs WHERE tenant_id = ? OR to_tenant_id = ?", o.TenantID, o.TenantID); err != nil || n != 0 {
			t.Fatalf("%d reference rows left (%v)", n, err)
		}
	})
}

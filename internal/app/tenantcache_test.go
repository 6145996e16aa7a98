package app

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// TestTenantCacheSeesATenantCreatedHereAtOnce: "not a tenant" is
// remembered, and forgotten by the commit that creates the tenant, before
// the write returns.
func TestTenantCacheSeesATenantCreatedHereAtOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		c := newTenantCache(st, time.Minute)
		name := storetest.Name("late")
		if c.exists(name) {
			t.Fatalf("%s is a tenant before its creation", name)
		}
		if _, err := st.Create(context.Background(), st.Registry().Resource("tenants"), models.Owner{}, map[string]any{"tenant": name}); err != nil {
			t.Fatal(err)
		}
		if !c.exists(name) {
			t.Fatalf("%s is still no tenant right after its creation", name)
		}
	})
}

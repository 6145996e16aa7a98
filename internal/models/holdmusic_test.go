package models_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// TestTenantAndExtensionHoldMusic: a tenant's and an extension's
// moh_class_id name a class of the same tenant (another tenant's class or
// none at all is 400; a new tenant has none yet); a class still named by
// its tenant or an extension cannot be deleted (409); deleting the tenant
// removes its classes although the tenant names one.
func TestTenantAndExtensionHoldMusic(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := t.Context()
		reg := st.Registry()
		tenants, mohs := reg.Resource("tenants"), reg.Resource("music_on_hold")
		a, b := newTenant(t, st), newTenant(t, st)
		jazz := mustCreate(t, st, "music_on_hold", a, `{"name":"jazz"}`)
		other := mustCreate(t, st, "music_on_hold", b, `{"name":"calm"}`)
		var verr *models.ValidationError

		if _, err := st.Create(ctx, tenants, models.Owner{}, decode(t, `{"tenant":"`+storetest.Name("moh")+`","moh_class_id":`+jsonID(jazz)+`}`)); !errors.As(err, &verr) || verr.Fields["moh_class_id"] == "" {
			t.Fatalf("new tenant with a class: %v", err)
		}
		if _, err := st.Update(ctx, tenants, models.Owner{}, a.Tenant, decode(t, `{"moh_class_id":`+jsonID(other)+`}`)); !errors.As(err, &verr) || !strings.Contains(verr.Fields["moh_class_id"], "does not exist") {
			t.Fatalf("another tenant's class: %v", err)
		}
		rec, err := st.Update(ctx, tenants, models.Owner{}, a.Tenant, decode(t, `{"moh_class_id":`+jsonID(jazz)+`}`))
		if err != nil || jsonID(models.Record{"id": rec["moh_class_id"]}) != jsonID(jazz) {
			t.Fatalf("own class: %v %v", rec["moh_class_id"], err)
		}
		if _, err := st.Create(ctx, reg.Resource("extensions"), a, decode(t, `{"name":"1001","moh_class_id":`+jsonID(other)+`}`)); !errors.As(err, &verr) || verr.Fields["moh_class_id"] == "" {
			t.Fatalf("extension with another tenant's class: %v", err)
		}
		mustCreate(t, st, "extensions", a, `{"name":"1001","moh_class_id":`+jsonID(jazz)+`}`)

		if err := st.Delete(ctx, mohs, a, jsonID(jazz)); !errors.Is(err, models.ErrConflict) || !strings.Contains(err.Error(), "extension") {
			t.Fatalf("delete a class an extension names: %v", err)
		}
		if err := st.Delete(ctx, reg.Resource("extensions"), a, "1001"); err != nil {
			t.Fatal(err)
		}
		if err := st.Delete(ctx, mohs, a, jsonID(jazz)); !errors.Is(err, models.ErrConflict) || !strings.Contains(err.Error(), "tenant "+a.Tenant) {
			t.Fatalf("delete the tenant's class: %v", err)
		}
		if err := st.Delete(ctx, tenants, models.Owner{}, a.Tenant); err != nil {
			t.Fatalf("delete a tenant naming its class: %v", err)
		}
		var n int
		if err := st.Querier().GetContext(ctx, &n, "SELECT COUNT(*) FROM music_on_hold WHERE tenant_id = ?", a.TenantID); err != nil || n != 0 {
			t.Fatalf("classes left: %d %v", n, err)
		}
	})
}

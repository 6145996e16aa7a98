package fsxml

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

// seedTenant creates tenant with one extension per fields map (each
// naming its "name") and returns the tenant's owner.
func seedTenant(t *testing.T, st *models.Store, tenant string, exts ...map[string]any) models.Owner {
	t.Helper()
	ctx := context.Background()
	if _, err := st.Create(ctx, st.Registry().Resource("tenants"), models.Owner{}, map[string]any{"tenant": tenant}); err != nil {
		t.Fatal(err)
	}
	o, err := st.Tenant(ctx, tenant)
	if err != nil {
		t.Fatal(err)
	}
	for _, fields := range exts {
		if _, err := st.Create(ctx, st.Registry().Resource("extensions"), o, fields); err != nil {
			t.Fatal(err)
		}
	}
	return o
}

// waitLive waits until every service's change notifications are live.
func waitLive(t *testing.T, svcs ...*Service) {
	t.Helper()
	wait.Until(t, 10*time.Second, "change notifications live", func() bool {
		for _, s := range svcs {
			if !s.note.live.Load() {
				return false
			}
		}
		return true
	})
}

// fetchUser answers FreeSWITCH's sip_auth directory fetch (capture 009)
// for user@sip.test through svc.
func fetchUser(t *testing.T, svc *Service, user string) string {
	t.Helper()
	raw, err := readCapture("009")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := svc.Fetch(context.Background(), fakefs.FormWith(raw, "user", user, "domain", "sip.test", "key_value", "sip.test"))
	if err != nil {
		t.Fatalf("%s: %v", user, err)
	}
	return string(doc)
}

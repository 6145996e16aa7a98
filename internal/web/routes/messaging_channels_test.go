package routes_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
)

// Provider credentials are write-only: neither the create answer, nor a
// read, nor a list shows them in clear; the column holds them sealed; the
// adapters get them back through Records.
func TestMessagingChannelCredentialsNeverReturned(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "msgc")
		base := "/api/tenants/" + tenant + "/messaging_channels/"
		const token = "f00dfeedbeefcafe0123456789abcdef"
		const sid = "AC0123456789abcdef0123456789abcdef"
		r := s.Do(t, "POST", base, s.Key, map[string]any{
			"name": "sms", "type": "sms", "provider": "twilio", "sender": "+27115550000",
			"credentials": map[string]any{"account_sid": sid, "auth_token": token},
		}).Expect(t, 201)
		created := r.Map(t)
		for _, body := range [][]byte{r.Body, s.Do(t, "GET", base+fmt.Sprint(created["id"]), s.Key, nil).Expect(t, 200).Body, s.Do(t, "GET", base, s.Key, nil).Expect(t, 200).Body} {
			if strings.Contains(string(body), token) || strings.Contains(string(body), sid) {
				t.Fatalf("answer shows provider credentials in clear: %s", body)
			}
		}
		creds, _ := created["credentials"].(map[string]any)
		if creds["auth_token"] != "****cdef" || creds["account_sid"] != "****cdef" {
			t.Errorf("create answer credentials %v, want the last four characters only", created["credentials"])
		}

		var stored string
		if err := s.Store.Querier().GetContext(context.Background(), &stored, "SELECT credentials FROM messaging_channels WHERE name = 'sms'"); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(stored, token) || !strings.HasPrefix(stored, "v1:") {
			t.Errorf("credentials column is not sealed: %q", stored)
		}
		owner, err := s.Store.Tenant(context.Background(), tenant)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := s.Store.Records(context.Background(), s.Store.Registry().Resource("messaging_channels"), owner, nil)
		if err != nil || len(recs) != 1 || !strings.Contains(recs[0]["credentials"].(string), token) {
			t.Errorf("Records must open the sealed credentials for the adapter: %v %v", recs, err)
		}

		// The provider's keys are required; a provider change needs new credentials.
		bad := s.Do(t, "POST", base, s.Key, map[string]any{"name": "x", "type": "sms", "provider": "twilio", "credentials": map[string]any{"account_sid": sid}}).Expect(t, 400)
		if !strings.Contains(string(bad.Body), "auth_token") {
			t.Errorf("missing credential key not named: %s", bad.Body)
		}
		s.Do(t, "PUT", base+fmt.Sprint(created["id"]), s.Key, map[string]any{"provider": "kannel"}).Expect(t, 400)
	})
}

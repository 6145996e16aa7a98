package fsxml

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/freeswitch/dialplan"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// Issue 28, memory: a tenant model holds every user's extension, 50,000 of
// them at the benchmark's scale, a million at the largest installations.
// A model holds them packed (dialplan's packed.go: a 72-byte record, 4
// bytes of name index and the values' text, with no pointer for the
// collector to follow) and weighs (Config.ModelBytes) exactly that. A
// typical user (a number, a name, the caller id derived from them, a
// secret, a PIN and an enumerated call permission: some 55 bytes of text)
// then weighs at most 140 bytes, where it weighed 410 as a struct and its
// strings, and some 700 as raw columns.
func TestExtensionModelStaysCompact(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		const users = 50
		tenant := storetest.Name("compact")
		var rows []map[string]any
		for i := range users {
			name, first, secret, pin := fmt.Sprint(1000+i), "User", fmt.Sprintf("Secret-%d-abcdefgh", 1000+i), "4321"
			rows = append(rows, map[string]any{"name": name, "first_name": first, "sip_secret": secret,
				"voicemail_pin": pin, "call_permission": "international"})
		}
		// One user with a forward set: its destination is held, and counted.
		rows[0]["forward_all"] = map[string]any{"enabled": true, "destination": "1049"}
		seedTenant(t, st, tenant, rows...)
		rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
		defer rdb.Close()
		svc := New(st, rdb, Config{Domain: "sip.test"}, nil)
		defer svc.Close()

		m, err := svc.buildTenant(context.Background(), tenant)
		if err != nil {
			t.Fatal(err)
		}
		if n := m.snap.ExtensionCount(); n != users || !m.allExtensions || m.snap.Extensions != nil {
			t.Fatalf("model holds %d extensions (all: %v, as structs: %d); want %d, packed", n, m.allExtensions, len(m.snap.Extensions), users)
		}
		x := m.snap.ExtensionNamed("1000")
		if x == nil || x.SIPSecret != "Secret-1000-abcdefgh" || x.VoicemailPIN != "4321" || x.CallPermission != "international" || x.CallerID != "User <1000>" ||
			x.ForwardAll != (dialplan.Forward{Enabled: true, Destination: "1049"}) || x.RingSeconds != 30 || x.MaxRegistrations != 5 || !x.Enabled {
			t.Fatalf("extension read back as %+v", x)
		}
		text := 0
		for _, x := range m.snap.ExtensionList() {
			v := reflect.ValueOf(x)
			for i := range v.NumField() {
				switch f := v.Field(i); f.Kind() {
				case reflect.String:
					text += f.Len()
				case reflect.Struct: // a forward setting
					text += f.FieldByName("Destination").Len()
				}
			}
		}
		if want := users*(72+4) + text; m.extWeight != want {
			t.Errorf("the extensions weigh %d bytes; they hold %d (%d records of 72 bytes and 4 of index, %d bytes of text)", m.extWeight, want, users, text)
		}
		if per := m.extWeight / users; per > 140 {
			t.Errorf("a typical user weighs %d bytes in a model; want at most 140", per)
		}
	})
}

package fsxml

import (
	"context"
	"fmt"
	"testing"
	"unsafe"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/freeswitch/dialplan"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// compactExtension is the size of dialplan.Extension with no padding: 15
// strings (16 bytes each), four forward settings (a flag and a string: 24
// each), two 8-byte ids, two 32-bit counts and eight flags.
const compactExtension = 15*16 + 4*24 + 2*8 + 2*4 + 8

// Issue 28, memory: a tenant model holds every user's extension, 50,000 of
// them at the benchmark's scale. The struct stays at its unpadded size, and
// a model weighs (Config.ModelBytes) exactly what its rows hold: the struct
// and each row's one string of its non-enumerated values (secrets opened),
// with nothing for empty values, shared enumerated ones (call_permission)
// or forward settings without a destination. Typical users (a number, a
// name, the caller id derived from them, a secret and a PIN: some 40
// bytes of text) then weigh at most the struct and 64 bytes, 410 here,
// where they weighed some 700 (408 bytes of struct and the raw columns:
// the sealed secrets, four 35-byte JSON forward settings, every number's
// digits).
func TestExtensionModelStaysCompact(t *testing.T) {
	if got := unsafe.Sizeof(dialplan.Extension{}); got != compactExtension {
		t.Fatalf("dialplan.Extension is %d bytes; its fields fit %d (order them by size, keep the counts 32-bit)", got, compactExtension)
	}
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		const users = 50
		tenant := storetest.Name("compact")
		var rows []map[string]any
		strs := 0 // the bytes of the values each row's string holds
		for i := range users {
			name, first, secret, pin := fmt.Sprint(1000+i), "User", fmt.Sprintf("Secret-%d-abcdefgh", 1000+i), "4321"
			rows = append(rows, map[string]any{"name": name, "first_name": first, "sip_secret": secret,
				"voicemail_pin": pin, "call_permission": "international"})
			callerID := first + " <" + name + ">" // derived when not given
			strs += len(name) + len(first) + len(callerID) + len(secret) + len(pin)
		}
		// One user with a forward set: its destination is held, and counted.
		rows[0]["forward_all"] = map[string]any{"enabled": true, "destination": "1049"}
		strs += len("1049")
		seedTenant(t, st, tenant, rows...)
		rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
		defer rdb.Close()
		svc := New(st, rdb, Config{Domain: "sip.test"}, nil)
		defer svc.Close()

		m, err := svc.buildTenant(context.Background(), tenant)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.snap.Extensions) != users || !m.allExtensions {
			t.Fatalf("model holds %d extensions (all: %v); want %d", len(m.snap.Extensions), m.allExtensions, users)
		}
		x := m.snap.Extensions[0]
		if x.SIPSecret != "Secret-1000-abcdefgh" || x.VoicemailPIN != "4321" || x.CallPermission != "international" ||
			x.ForwardAll != (dialplan.Forward{Enabled: true, Destination: "1049"}) || x.RingSeconds != 30 || x.MaxRegistrations != 5 {
			t.Fatalf("extension read back as %+v", x)
		}
		// One allocation per row: a row's values lie one after the other.
		y := &m.snap.Extensions[1]
		if unsafe.Pointer(unsafe.StringData(y.FirstName)) != unsafe.Add(unsafe.Pointer(unsafe.StringData(y.Name)), len(y.Name)) {
			t.Error("an extension's name and first name are not parts of one string")
		}
		if unsafe.StringData(y.CallPermission) != unsafe.StringData(m.snap.Extensions[2].CallPermission) {
			t.Error("an enumerated value (call_permission) is copied into each row, not shared")
		}
		if want := users*compactExtension + strs; m.extWeight != want {
			t.Errorf("the extensions weigh %d bytes; they hold %d (%d structs of %d bytes and %d string bytes)", m.extWeight, want, users, compactExtension, strs)
		}
		if per := m.extWeight / users; per > compactExtension+64 {
			t.Errorf("a typical user weighs %d bytes in a model; want at most %d", per, compactExtension+64)
		}
	})
}

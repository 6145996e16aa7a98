package dialplan

import (
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

// valetData is the valet_park data of a rendered document ("" when none).
func valetData(t *testing.T, doc []byte) string {
	t.Helper()
	found := decodeTree(t, doc).find("action", "application", "valet_park", "data")
	if len(found) != 1 {
		return ""
	}
	return found[0]
}

// TestParkLotPerTenant: each tenant parks in and retrieves from its own lot
// only; no tenant's lot name is another's, and a tenant's context never
// names another lot whatever is dialled.
func TestParkLotPerTenant(t *testing.T) {
	now := at(t, "2026-11-23 10:00")
	for _, pair := range [][2]string{{"acme", "acme_lot"}, {"ab", "a_b"}, {"a_lot", "a"}} {
		if naming.ParkLot(pair[0], testDomain) == naming.ParkLot(pair[1], testDomain) {
			t.Errorf("tenants %q and %q share a lot", pair[0], pair[1])
		}
	}
	for _, tenant := range []string{"acme", "globex"} {
		snap := loadSnap(t)
		enablePark(snap)
		snap.Tenant.Tenant = tenant
		for _, number := range []string{"*70", "*705", "park+5", "park+20"} {
			doc, tr := TenantContext(testOpts, callRequest(t, tenant, number), snap, now)
			data := valetData(t, doc)
			lot, _, _ := strings.Cut(data, " ")
			if tr.Feature != "park" || lot != tenant+"_lot@"+testDomain {
				t.Errorf("%s dials %s: lot %q (trace %+v)", tenant, number, lot, tr)
			}
			if ctx := decodeTree(t, doc).find("action", "application", "set", "data"); !strings.Contains(strings.Join(ctx, ","), "valet_parking_orbit_context="+tenant) {
				t.Errorf("%s dials %s: a timed-out call leaves the tenant's context: %v", tenant, number, ctx)
			}
			// Another tenant's context never serves this one's lot.
			other := loadSnap(t)
			enablePark(other)
			other.Tenant.Tenant = "initech"
			if doc, _ := TenantContext(testOpts, callRequest(t, tenant, number), other, now); !xmldoc.IsNotFound(doc) {
				t.Errorf("%s's call was served by another tenant's context:\n%s", tenant, doc)
			}
		}
	}
}

// TestParkSlots: the code alone lets valet choose a free slot in the lot's
// range; the code or park+ followed by a slot names that slot.
func TestParkSlots(t *testing.T) {
	now := at(t, "2026-11-23 10:00")
	snap := loadSnap(t)
	enablePark(snap)
	lot := naming.ParkLot("acme", testDomain)
	for number, want := range map[string]string{
		"*70":     lot + " auto in 1 20",
		"*701":    lot + " 1",
		"*7020":   lot + " 20",
		"park+1":  lot + " 1",
		"park+12": lot + " 12",
	} {
		doc, _ := TenantContext(testOpts, callRequest(t, "acme", number), snap, now)
		if got := valetData(t, doc); got != want {
			t.Errorf("%s: valet_park %q, want %q", number, got, want)
		}
	}
	// A changed park code carries its slots along.
	snap.FeatureExtensions[8].Code = "*5900"
	for number, want := range map[string]string{"*5900": lot + " auto in 1 20", "*59007": lot + " 7"} {
		doc, _ := TenantContext(testOpts, callRequest(t, "acme", number), snap, now)
		if got := valetData(t, doc); got != want {
			t.Errorf("%s: valet_park %q, want %q", number, got, want)
		}
	}
	if doc, _ := TenantContext(testOpts, callRequest(t, "acme", "*705"), snap, now); !xmldoc.IsNotFound(doc) {
		t.Errorf("the old code still parks:\n%s", doc)
	}
}

// TestParkCodeYieldsToExactCodes: a tenant code equal to the park code and
// a slot (*705 here) is that feature, not slot 5.
func TestParkCodeYieldsToExactCodes(t *testing.T) {
	now := at(t, "2026-11-23 10:00")
	snap := loadSnap(t)
	enablePark(snap)
	withFeature("dnd_toggle", "*705", false)(snap)
	doc, tr := TenantContext(testOpts, callRequest(t, "acme", "*705"), snap, now)
	if tr.Feature != "dnd_toggle" || valetData(t, doc) != "" {
		t.Errorf("*705 went to %s:\n%s", tr.Feature, doc)
	}
}

// TestParkTimeoutReturnsToExtension: the timeout is armed only for a call
// put through to one of our extensions (sb_called_ext), and the orbit
// number it is then sent to rings that extension in the tenant context.
func TestParkTimeoutReturnsToExtension(t *testing.T) {
	now := at(t, "2026-11-23 10:00")
	snap := loadSnap(t)
	enablePark(snap)
	doc, _ := TenantContext(testOpts, callRequest(t, "acme", "*70"), snap, now)
	tree := decodeTree(t, doc)
	fields := tree.find("condition", "", "", "field")
	if len(fields) != 2 || fields[0] != "destination_number" || fields[1] != "${sb_called_ext}" {
		t.Fatalf("conditions %q", fields)
	}
	if brk := tree.find("condition", "field", "${sb_called_ext}", "break"); len(brk) != 1 || brk[0] != "never" {
		t.Fatalf("a call without sb_called_ext must still park: break %q", brk)
	}
	sets := strings.Join(tree.find("action", "application", "set", "data"), ",")
	for _, want := range []string{"valet_parking_timeout=120", "valet_parking_orbit_exten=" + parkReturnPrefix + "${sb_called_ext}", "valet_parking_orbit_dialplan=XML", "valet_parking_orbit_context=acme"} {
		if !strings.Contains(sets, want) {
			t.Errorf("missing set %s in %s", want, sets)
		}
	}
	// sb_called_ext is set on every call to an extension...
	doc, _ = TenantContext(testOpts, callRequest(t, "acme", "1001"), snap, now)
	if sets := decodeTree(t, doc).find("action", "application", "set", "data"); !strings.Contains(strings.Join(sets, ","), "sb_called_ext=1001") {
		t.Fatalf("an extension call does not set sb_called_ext: %v", sets)
	}
	// ...and the orbit number rings it.
	doc, tr := TenantContext(testOpts, callRequest(t, "acme", parkReturnPrefix+"1001"), snap, now)
	if tr.Match != "park_return" || len(decodeTree(t, doc).find("action", "application", "transfer", "data")) != 1 {
		t.Fatalf("park-return-1001: %+v\n%s", tr, doc)
	}
	doc, _ = TenantContext(testOpts, callRequest(t, "acme", "1001"), snap, now)
	if xmldoc.IsNotFound(doc) {
		t.Fatal("the return transfer lands nowhere")
	}
}

// TestDestinationExtension: the loader reads the extension an internal
// number acts on, so park-return-<ext> finds it in a partial snapshot.
func TestDestinationExtension(t *testing.T) {
	for in, want := range map[string]string{"1001": "1001", "fail-1002": "1002", "park-return-1003": "1003", "*70": "*70", "park+5": "park+5"} {
		if got := DestinationExtension(in); got != want {
			t.Errorf("DestinationExtension(%q) = %q, want %q", in, got, want)
		}
	}
}

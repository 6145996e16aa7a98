package dialplan

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

// callerFields are the mod_xml_curl fields whose content a caller (or a SIP
// peer) controls: its display name, its number and what it dialled.
var callerFields = []string{
	"Caller-Caller-ID-Name", "Caller-Caller-ID-Number", "Caller-Orig-Caller-ID-Name",
	"Caller-Destination-Number", "Hunt-Destination-Number", "Hunt-Caller-ID-Name",
	"Hunt-Caller-ID-Number", "variable_sip_from_display", "variable_sip_from_user",
}

// expansions counts the places in a document's action data and variable
// values where FreeSWITCH would expand something at run time.
func expansions(t testing.TB, doc []byte) int {
	t.Helper()
	tree := decodeTree(t, doc)
	n := 0
	var values []string
	values = append(values, tree.find("action", "", "", "data")...)
	values = append(values, tree.find("anti-action", "", "", "data")...)
	values = append(values, tree.find("variable", "", "", "value")...)
	values = append(values, tree.find("param", "", "", "value")...)
	for _, v := range values {
		n += strings.Count(v, "${") + strings.Count(v, "$$")
	}
	return n
}

// A caller's display name of '$', DEL, '{' must not become "${" once the
// control byte is dropped (seen on a real FreeSWITCH: md5 ran).
func TestCallerNameControlByteCannotFormExpansion(t *testing.T) {
	snap := loadSnap(t)
	snap.InboundRoutes[0].RoutingConditionID = 0
	snap.InboundRoutes[0].CallerIDNamePrefix = "ACME:"
	now := at(t, "2026-11-23 10:00")
	for c := 0; c < 0x20; c++ {
		testCallerName(t, snap, now, "$"+string(rune(c))+"{md5(sbinj)}")
	}
	testCallerName(t, snap, now, "$\x7f{md5(sbinj)}")
	testCallerName(t, snap, now, "$\xff{hostname}")
	testCallerName(t, snap, now, "$ \t{hostname}")
	testCallerName(t, snap, now, strings.Repeat("a", 63)+"\xc3$${hostname}")
}

func testCallerName(t *testing.T, snap *TenantSnapshot, now time.Time, name string) {
	t.Helper()
	req := callRequest(t, "public", "+27115550100", "Caller-Caller-ID-Name", name)
	doc, _ := Public(testOpts, req, publicFor(snap, "+27115550100"), now)
	if xmldoc.IsNotFound(doc) {
		t.Fatalf("no route for %q", name)
	}
	for _, data := range decodeTree(t, doc).find("action", "application", "set", "data") {
		if strings.HasPrefix(data, "effective_caller_id_name=") && strings.ContainsAny(data, "${}\\") {
			t.Fatalf("caller name %q rendered as %q", name, data)
		}
	}
}

// FuzzCallerData puts arbitrary bytes in every caller-controlled request
// field and checks that no rendered action or variable gains an expansion.
func FuzzCallerData(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Add("$\x7f{md5(sbinj)}")
	f.Add("$\x00{system(id)}")
	snap := loadSnap(f)
	snap.InboundRoutes[0].RoutingConditionID = 0
	snap.InboundRoutes[0].CallerIDNamePrefix = "ACME:"
	now := at(f, "2026-11-23 10:00")
	// The same tenant with caller name lookup on: the fuzzed text is also
	// the contact name the caller's number found.
	lookup := *snap
	lookup.Tenant.CRMCallerNameLookup = true
	render := func(t testing.TB, s string) (pub, contact, tenant []byte) {
		var kv []string
		for _, field := range callerFields {
			if strings.Contains(field, "Destination") {
				continue // the number dialled decides the route: fuzzed below
			}
			kv = append(kv, field, s)
		}
		req := callRequest(t, "public", "+27115550100", kv...)
		pub, _ = Public(testOpts, req, publicFor(snap, "+27115550100"), now)
		withContact := publicFor(&lookup, "+27115550100")
		withContact.CallerContactName = s
		contact, _ = Public(testOpts, req, withContact, now)
		req = callRequest(t, "acme", "0825550123", append(kv, "variable_sb_tenant", "acme", "variable_sb_ext", "1001")...)
		tenant, _ = TenantContext(testOpts, req, snap, now)
		return pub, contact, tenant
	}
	basePub, baseContact, baseTenant := render(f, "benign")
	wantPub, wantContact, wantTenant := expansions(f, basePub), expansions(f, baseContact), expansions(f, baseTenant)
	f.Fuzz(func(t *testing.T, s string) {
		pub, contact, tenant := render(t, s)
		checkWellFormed(t, pub)
		checkWellFormed(t, contact)
		checkWellFormed(t, tenant)
		if got := expansions(t, contact); got > wantContact {
			t.Fatalf("contact name %q added an expansion to the public document:\n%s", s, contact)
		}
		if got := expansions(t, pub); got > wantPub {
			t.Fatalf("caller data %q added an expansion to the public document:\n%s", s, pub)
		}
		if got := expansions(t, tenant); got > wantTenant {
			t.Fatalf("caller data %q added an expansion to the tenant document:\n%s", s, tenant)
		}
		// Caller data on calls to voicemail and dial-by-name: as many
		// expansions as with a benign caller (only our own variables).
		for _, number := range []string{"800", "*97", "*98", "*991001", "411", "fail-1001"} {
			var kv []string
			for _, field := range callerFields[:3] {
				kv = append(kv, field, s)
			}
			doc, _ := TenantContext(testOpts, callRequest(t, "acme", number, kv...), snap, now)
			base, _ := TenantContext(testOpts, callRequest(t, "acme", number), snap, now)
			checkWellFormed(t, doc)
			if xmldoc.IsNotFound(doc) || expansions(t, doc) != expansions(t, base) {
				t.Fatalf("caller data %q on a call to %s:\n%s", s, number, doc)
			}
		}
		// The dialled number itself, in both contexts.
		for _, ctx := range []string{"public", "acme"} {
			doc, _ := TenantContext(testOpts, callRequest(t, ctx, s, "variable_sb_tenant", "acme", "variable_sb_ext", "1001"), snap, now)
			checkWellFormed(t, doc)
			if strings.Contains(string(doc), "$") {
				t.Fatalf("raw '$' in document for number %q", s)
			}
			if got := expansions(t, doc); got > wantTenant {
				t.Fatalf("dialled %q added an expansion:\n%s", s, doc)
			}
			doc, _ = Public(testOpts, callRequest(t, "public", s), publicFor(snap, s), now)
			checkWellFormed(t, doc)
			if got := expansions(t, doc); got > wantPub {
				t.Fatalf("dialled %q added an expansion:\n%s", s, doc)
			}
		}
	})
}

func checkWellFormed(t *testing.T, doc []byte) {
	t.Helper()
	if err := xmlCheck(doc); err != nil {
		t.Fatalf("not well-formed: %v\n%s", err, doc)
	}
}

// Caller name lookup: a tenant that enables it shows the contact's name
// (after the route's prefix) instead of the caller's own display name;
// a hostile contact name is rendered escaped and cannot expand; a tenant
// that does not enable it ignores the contact.
func TestCallerContactNameRendered(t *testing.T) {
	snap := loadSnap(t)
	snap.InboundRoutes[0].RoutingConditionID = 0
	now := at(t, "2026-11-23 10:00")
	lookup := *snap
	lookup.Tenant.CRMCallerNameLookup = true
	name := func(s *TenantSnapshot, prefix, contact string) (string, Trace) {
		t.Helper()
		s.InboundRoutes[0].CallerIDNamePrefix = prefix
		pub := publicFor(s, "+27115550100")
		pub.CallerContactName = contact
		doc, tr := Public(testOpts, callRequest(t, "public", "+27115550100", "Caller-Caller-ID-Name", "From Header"), pub, now)
		checkWellFormed(t, doc)
		if got := expansions(t, doc); got > 0 {
			t.Fatalf("contact %q: %d expansions in\n%s", contact, got, doc)
		}
		for _, data := range decodeTree(t, doc).find("action", "application", "set", "data") {
			if v, ok := strings.CutPrefix(data, "effective_caller_id_name="); ok {
				return v, tr
			}
		}
		return "", tr
	}
	for _, tc := range []struct {
		snap            *TenantSnapshot
		prefix, contact string
		want            string
	}{
		{&lookup, "", "Thandi Nkosi", "Thandi Nkosi"},
		{&lookup, "Sales:", "Thandi Nkosi", "Sales: Thandi Nkosi"},
		{&lookup, "Sales:", "", "Sales: From Header"}, // unknown caller: its own name
		{&lookup, "", "", ""},
		{&lookup, "", "${system(id)} <b>&amp; $${x}", "system(id) <b>&amp; x"},
		{&lookup, "", "$\x01{md5(x)}", "md5(x)"},
		{snap, "", "Thandi Nkosi", ""}, // lookup off: the contact is not used
	} {
		got, tr := name(tc.snap, tc.prefix, tc.contact)
		if got != tc.want {
			t.Errorf("lookup %v, prefix %q, contact %q: effective_caller_id_name %q, want %q", tc.snap.Tenant.CRMCallerNameLookup, tc.prefix, tc.contact, got, tc.want)
		}
		if tc.snap.Tenant.CRMCallerNameLookup && !tr.CallerDependent {
			t.Errorf("contact %q: render not marked caller-dependent (it would be cached for every caller)", tc.contact)
		}
	}
}

package dialplan

import (
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
)

// pickupRequest is a call from extension ext of tenant to number.
func pickupRequest(t *testing.T, tenant, ext, number string) xmlcurl.Request {
	return callRequest(t, "acme", number, "variable_sb_ext", ext, "variable_sb_tenant", tenant)
}

// TestDirectedPickupGolden: a picker who shares a group with the target
// intercepts the caller's leg of the call ringing there.
func TestDirectedPickupGolden(t *testing.T) {
	now := at(t, "2026-11-23 10:00")
	snap := loadSnap(t).WithRinging("1001", []RingingCall{{UUID: "9a1d6c2e-0000-4b8e-9c55-2f0e1b7a0b01", CallUUID: "5c2a8f0e-1111-4c3d-8e9f-0a1b2c3d4e5f", Node: "fs1"}})
	doc, tr := TenantContext(testOpts, pickupRequest(t, "acme", "1002", "**1001"), snap, now)
	renderCase(t, "tenant_feature_directed_pickup", doc, tr)
	if !tr.LiveDependent {
		t.Fatal("a directed pickup render must be marked live (never cached)")
	}
}

// TestDirectedPickupRefusals: every case that must not intercept gets the
// clean refusal (error tone, hangup), never an intercept.
func TestDirectedPickupRefusals(t *testing.T) {
	now := at(t, "2026-11-23 10:00")
	ringing := func(ext string, calls ...RingingCall) *TenantSnapshot { return loadSnap(t).WithRinging(ext, calls) }
	call := RingingCall{UUID: "9a1d6c2e-0000-4b8e-9c55-2f0e1b7a0b01", CallUUID: "5c2a8f0e-1111-4c3d-8e9f-0a1b2c3d4e5f"}
	tests := []struct {
		name   string
		req    xmlcurl.Request
		snap   *TenantSnapshot
		reason string
	}{
		{"picker in no group", pickupRequest(t, "acme", "1003", "**1001"), ringing("1001", call), "not allowed"},
		{"only a disabled group joins them", pickupRequest(t, "acme", "1004", "**1001"), ringing("1001", call), "not allowed"},
		{"target is a picker, not a member", pickupRequest(t, "acme", "1005", "**1004"), ringing("1004", call), "not allowed"},
		{"caller of another tenant", pickupRequest(t, "other", "1002", "**1001"), ringing("1001", call), "not allowed"},
		{"caller not an extension", callRequest(t, "acme", "**1001"), ringing("1001", call), "not allowed"},
		{"nothing ringing", pickupRequest(t, "acme", "1002", "**1001"), ringing("1001"), "no call ringing"},
		{"live state of another extension", pickupRequest(t, "acme", "1002", "**1001"), ringing("1002", call), "no call ringing"},
		{"no live state read", pickupRequest(t, "acme", "1002", "**1001"), loadSnap(t), "no call ringing"},
		{"tracker data that is no UUID", pickupRequest(t, "acme", "1002", "**1001"),
			ringing("1001", RingingCall{UUID: "${system(id)}", CallUUID: "x,y"}), "no call ringing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, tr := TenantContext(testOpts, tt.req, tt.snap, now)
			if tr.Match != "feature" || !strings.Contains(tr.Reason, tt.reason) {
				t.Fatalf("trace %+v, want a refusal (%s)", tr, tt.reason)
			}
			tree := decodeTree(t, doc)
			if got := tree.find("action", "application", "intercept", "data"); len(got) != 0 {
				t.Fatalf("intercepted %q\n%s", got, doc)
			}
			if got := tree.find("action", "application", "hangup", "data"); len(got) != 1 {
				t.Fatalf("no hangup after the refusal\n%s", doc)
			}
			if strings.Contains(string(doc), "system") {
				t.Fatalf("tracker data reached the document\n%s", doc)
			}
		})
	}
}

// TestDirectedPickupOwnLegOnly: when the tracker knows only the ringing
// leg (the call's UUID is its own), the partner of that leg is
// intercepted; the picker is never bridged to the ringing phone itself.
func TestDirectedPickupOwnLegOnly(t *testing.T) {
	now := at(t, "2026-11-23 10:00")
	snap := loadSnap(t).WithRinging("1005", []RingingCall{{UUID: "9a1d6c2e-0000-4b8e-9c55-2f0e1b7a0b01", CallUUID: "9a1d6c2e-0000-4b8e-9c55-2f0e1b7a0b01"}})
	doc, tr := TenantContext(testOpts, pickupRequest(t, "acme", "1004", "**1005"), snap, now)
	got := decodeTree(t, doc).find("action", "application", "intercept", "data")
	if len(got) != 1 || got[0] != "-bleg 9a1d6c2e-0000-4b8e-9c55-2f0e1b7a0b01" {
		t.Fatalf("intercept = %q, trace %+v\n%s", got, tr, doc)
	}
}

// TestGroupPickupRefusesOtherTenant: a caller from another tenant's
// context variables never reaches this tenant's pickup keys.
func TestGroupPickupRefusesOtherTenant(t *testing.T) {
	now := at(t, "2026-11-23 10:00")
	doc, tr := TenantContext(testOpts, pickupRequest(t, "other", "1002", "*8"), loadSnap(t), now)
	if got := decodeTree(t, doc).find("action", "application", "pickup", "data"); len(got) != 0 || tr.Reason == "" {
		t.Fatalf("pickup %q for another tenant's caller (trace %+v)", got, tr)
	}
}

// TestDirectedPickupTarget: the renderer's caller learns which extension
// to read live state for, only for the tenant's enabled code.
func TestDirectedPickupTarget(t *testing.T) {
	snap := loadSnap(t)
	if ext, ok := DirectedPickupTarget(snap, "**1001"); !ok || ext != "1001" {
		t.Fatalf("**1001: %q %v", ext, ok)
	}
	for _, n := range []string{"**", "*81001", "1001", "**1001x"} {
		if _, ok := DirectedPickupTarget(snap, n); ok {
			t.Fatalf("%s: taken as a directed pickup", n)
		}
	}
	snap.FeatureExtensions[len(snap.FeatureExtensions)-1].Enabled = false
	if _, ok := DirectedPickupTarget(snap, "**1001"); ok {
		t.Fatal("disabled code still a directed pickup")
	}
}

// TestPickupGroupNamesTenantPrefixed: disabled groups are not rung, and a
// key is always the tenant's.
func TestPickupGroupNamesTenantPrefixed(t *testing.T) {
	now := at(t, "2026-11-23 10:00")
	snap := loadSnap(t)
	doc, _ := TenantContext(testOpts, callRequest(t, "acme", "1004"), snap, now)
	if strings.Contains(string(doc), "pickup/") {
		t.Fatalf("1004 is only in a disabled group but rings a pickup leg\n%s", doc)
	}
	snap.PickupGroups[0].Name = "bad,name"
	doc, _ = TenantContext(testOpts, callRequest(t, "acme", "1001"), snap, now)
	if strings.Contains(string(doc), "pickup/") {
		t.Fatalf("an unsafe group name reached the dial string\n%s", doc)
	}
}

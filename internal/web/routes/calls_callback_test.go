package routes_test

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/platform/racecheck"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

// routedCallEnv is a callEnv whose fake FreeSWITCH routes loopback legs
// through Switchboard's own /fs/xml, with a national outbound route to a
// trunk that reaches the test mobile (with the trunk fields in extra).
func routedCallEnv(t *testing.T, e *callEnv, extra ...map[string]any) (trunk string) {
	t.Helper()
	e.fs.SetXMLCurlURL(e.URL + "/fs/xml")
	trunk = "carrier_" + strings.ToLower(e.tenant)
	body := map[string]any{"name": trunk, "host": "carrier.example", "tenants": []string{e.tenant}}
	for _, m := range extra {
		maps.Copy(body, m)
	}
	e.Do(t, "POST", "/api/sip_trunks/", e.Key, body).Expect(t, 201)
	e.Do(t, "POST", "/api/tenants/"+e.tenant+"/outbound_routes/", e.Key, map[string]any{
		"name": "mobiles", "priority": 10, "trunks": []string{trunk}, "min_permission": "national",
		"patterns": []map[string]any{{"match": "+27XXXXXXXXX"}},
	}).Expect(t, 201)
	return trunk
}

// findChannel waits for a live fake channel whose name has prefix.
func findChannel(t *testing.T, fs *fakefs.Server, prefix string) fakefs.Channel {
	t.Helper()
	var found fakefs.Channel
	wait.Until(t, 5*time.Second, "fake channel "+prefix, func() bool {
		for _, c := range fs.Channels() {
			if strings.HasPrefix(c.Name, prefix) {
				found = c
				return true
			}
		}
		return false
	})
	return found
}

// TestCallbackRoutedWithTheUsersPermissions places a callback through a
// fake that evaluates the tenant's outbound route with the routed leg's
// variables: the mobile leg is dialled on the trunk (toll_allow and the
// user's caller id travel in the originate's {} variables, the only ones the
// loopback -b leg gets), then the destination extension rings and is bridged.
func TestCallbackRoutedWithTheUsersPermissions(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		trunk := routedCallEnv(t, e)
		r := e.Do(t, "POST", "/api/telephony/call", e.user, map[string]any{"from": testMobile, "to": "1002"}).Expect(t, 202).Map(t)
		line := waitCommand(t, e.fs, "bgapi originate")
		for _, want := range []string{"{^^;", ";toll_allow=internal,local,national;", "sb_tenant=" + e.tenant, "sb_ext=1001", "effective_caller_id_number=1001"} {
			if !strings.Contains(line, want) {
				t.Errorf("originate lacks %s: %s", want, line)
			}
		}
		mobile := findChannel(t, e.fs, "sofia/external/"+testMobile)
		callee := findChannel(t, e.fs, "sofia/internal/1002-"+e.tenant+"@")
		if callee.Dest != "1002-"+e.tenant || callee.Var("presence_id") != "1002-"+e.tenant+"@sip.test" {
			t.Errorf("callee leg %+v", callee)
		}
		if mobile.Peer == "" || callee.Peer != r["uuid"] {
			t.Errorf("legs not bridged: mobile peer %q, callee peer %q (a leg %v)", mobile.Peer, callee.Peer, r["uuid"])
		}
		b := findChannel(t, e.fs, "loopback/"+testMobile+"-b")
		if b.Var("toll_allow") != "internal,local,national" || b.Context != e.tenant {
			t.Errorf("-b leg vars %v context %q", b.Vars, b.Context)
		}
		_ = trunk
	})
}

// TestCallbackRefusedByTheTenantsRoute: an extension limited to internal
// calls may not be rung back on a mobile: the route's toll_allow check
// refuses the -b leg and FreeSWITCH answers -ERR CALL_REJECTED.
func TestCallbackRefusedByTheTenantsRoute(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		routedCallEnv(t, e)
		e.Do(t, "PUT", "/api/tenants/"+e.tenant+"/extensions/1001", e.Key, map[string]any{"call_permission": "internal"}).Expect(t, 200)
		e.Do(t, "POST", "/api/telephony/call", e.user, map[string]any{"from": testMobile, "to": "1002"}).Expect(t, 202)
		if line := waitCommand(t, e.fs, "bgapi originate"); !strings.Contains(line, ";toll_allow=internal;") {
			t.Fatalf("originate %s", line)
		}
		wait.Until(t, 5*time.Second, "both loopback legs gone", func() bool { return len(e.fs.Channels()) == 0 })
		for _, c := range e.fs.Channels() {
			t.Errorf("channel left: %+v", c)
		}
	})
}

// TestInboundDIDCallBelongsToItsTenant: a carrier call to a DID starts in
// context public without sb_tenant and enters the tenant on answer; the
// tenant's key lists it and its CDR names the tenant.
func TestInboundDIDCallBelongsToItsTenant(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		id, err := e.fs.CreateChannel(fakefs.DIDCall("+15557654321", "+15550001000", e.tenant, "1001"))
		if err != nil {
			t.Fatal(err)
		}
		var ch map[string]any
		wait.Until(t, 5*time.Second, "the tenant sees its inbound call", func() bool {
			var list []map[string]any
			e.Do(t, "GET", "/api/telephony/channels", e.tenantKey, nil).Expect(t, 200).JSON(t, &list)
			if len(list) == 1 && list[0]["uuid"] == id {
				ch = list[0]
				return true
			}
			return false
		})
		if ch["tenant"] != e.tenant || !strings.Contains(ch["id"].(string), "-"+e.tenant+"-") {
			t.Errorf("channel %v", ch)
		}
		e.Do(t, "GET", "/api/telephony/channels/"+esc(ch["id"].(string)), e.tenantKey, nil).Expect(t, 200)
		if err := e.fs.Hangup(id, ""); err != nil {
			t.Fatal(err)
		}
		wait.Until(t, 5*time.Second, "the tenant's cdr", func() bool {
			var list []map[string]any
			e.Do(t, "GET", "/api/reports/cdrs", e.tenantKey, nil).Expect(t, 200).JSON(t, &list)
			return len(list) == 1 && list[0]["uuid"] == id && list[0]["tenant"] == e.tenant
		})
	})
}

// TestFreeSWITCHRestartEndsItsCalls: a bridged call is up for a moment
// (far less than the resync grace), FreeSWITCH is killed and started again
// with a new Core-UUID: both legs leave the live list and get CDRs.
func TestFreeSWITCHRestartEndsItsCalls(t *testing.T) {
	if racecheck.Enabled {
		// The fake drops connections the pool may be authenticating; eslgo
		// v1.5.2's own close then races its unlocked auth goroutine.
		// `make test` runs this test again without -race.
		t.Skip("skipped under -race: eslgo closing a connection mid-authentication races inside eslgo")
	}
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		_, a := e.liveChannel(t, e.tenant, "1001")
		b, err := e.fs.CreateChannel(fakefs.ChannelSpec{Direction: "outbound", CIDNum: "1001", Dest: "1002", Context: e.tenant, Answer: true,
			Vars: []fakefs.Header{{Name: "sb_tenant", Value: e.tenant}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.fs.Bridge(a, b); err != nil {
			t.Fatal(err)
		}
		e.waitChannel(t, b)
		oldCore := e.fs.CoreUUID()
		e.fs.Crash()
		if err := e.fs.Restart(); err != nil {
			t.Fatal(err)
		}
		if e.fs.CoreUUID() == oldCore {
			t.Fatal("fake kept its Core-UUID across a restart")
		}
		wait.Until(t, 10*time.Second, "ghost channels gone", func() bool {
			var list []map[string]any
			e.Do(t, "GET", "/api/telephony/channels", e.tenantKey, nil).Expect(t, 200).JSON(t, &list)
			return len(list) == 0
		})
		wait.Until(t, 5*time.Second, "cdrs of both legs", func() bool {
			var list []map[string]any
			e.Do(t, "GET", "/api/reports/cdrs", e.tenantKey, nil).Expect(t, 200).JSON(t, &list)
			return len(list) == 2
		})
	})
}

// TestNewTenantsCallsAreTheirsAtOnce: a call in a context that is not yet a
// tenant is tenantless; once the tenant is created through the API, the
// next call in that context belongs to it at once (no stale "not a
// tenant" answer).
func TestNewTenantsCallsAreTheirsAtOnce(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		name := "late_" + strings.ToLower(e.tenant[len(e.tenant)-6:])
		first, err := e.fs.CreateChannel(fakefs.ChannelSpec{CIDNum: "1001", Dest: "1002", Context: name, Answer: true})
		if err != nil {
			t.Fatal(err)
		}
		e.waitChannel(t, first)
		ch := e.Do(t, "GET", "/api/telephony/channels/"+esc(e.waitChannel(t, first)), e.Key, nil).Expect(t, 200).Map(t)
		if ch["tenant"] != "" {
			t.Fatalf("context %s is no tenant yet, channel says %v", name, ch["tenant"])
		}
		e.Do(t, "POST", "/api/tenants/", e.Key, map[string]any{"tenant": name}).Expect(t, 201)
		second, err := e.fs.CreateChannel(fakefs.ChannelSpec{CIDNum: "1001", Dest: "1002", Context: name, Answer: true})
		if err != nil {
			t.Fatal(err)
		}
		id := e.waitChannel(t, second)
		if ch := e.Do(t, "GET", "/api/telephony/channels/"+esc(id), e.Key, nil).Expect(t, 200).Map(t); ch["tenant"] != name {
			t.Errorf("call after the tenant's creation: tenant %v", ch["tenant"])
		}
	})
}

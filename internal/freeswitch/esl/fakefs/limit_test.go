package fakefs

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/platform/wait"
)

// limitedXML is an outbound route as Switchboard renders it for a tenant
// with max_concurrent_calls 2 and a trunk with max_channels 1: the
// tenant's limit, then the trunk's bridge under limit_execute, then a
// hangup when no trunk took the call.
const limitedXML = `<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<document type="freeswitch/xml"><section name="dialplan"><context name="acme">
<extension name="to-carrier">
<condition field="destination_number" expression="^\+1555000100[12]&#36;">
<action application="limit" data="hash acme outbound 2 !USER_BUSY"/>
<action application="limit_execute" data="hash trunk carrier 1 bridge sofia/gateway/carrier/&#36;1"/>
<action application="hangup" data="NORMAL_TEMPORARY_FAILURE"/>
</condition></extension></context></section></document>`

func limitedDialplan(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(limitedXML))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// limitEvent reads the next event and returns its limit::usage headers as
// "realm key usage rate max ratemax".
func limitEvent(t *testing.T, rc *rawClient) string {
	t.Helper()
	h, _ := rc.event()
	for k, v := range h { // plain events carry URL-encoded values
		h[k][0], _ = url.QueryUnescape(v[0])
	}
	if h.Get("Event-Name") != "CUSTOM" || h.Get("Event-Subclass") != "limit::usage" || h.Get("backend") != "hash" {
		t.Fatalf("not a limit::usage event: %v", h)
	}
	if h.Get("Unique-ID") != "" || h.Get("Event-Calling-Function") != "switch_limit_fire_event" {
		t.Errorf("limit::usage carries no channel data and comes from switch_limit_fire_event: %v", h)
	}
	return strings.Join([]string{h.Get("realm"), h.Get("key"), h.Get("usage"), h.Get("rate"), h.Get("max"), h.Get("ratemax")}, " ")
}

// TestLimitUsageEventsFollowTheDialplansLimits: limit and limit_execute
// count each call as mod_hash does and fire limit::usage with the usage
// after each increment, to the connections subscribed to that subclass
// only; a call over a limit fires nothing (the trunk's bridge is skipped,
// the tenant's limit hangs up with its cause), and a hangup releases what
// the call held.
func TestLimitUsageEventsFollowTheDialplansLimits(t *testing.T) {
	s := startFake(t, Options{XMLCurlURL: limitedDialplan(t)})
	rc := dialListener(t, s.Addr(), "CUSTOM limit::usage")
	other := dialListener(t, s.Addr(), "CHANNEL_CREATE CUSTOM sofia::gateway_state")
	api := dialAuthed(t, s.Addr())

	first := "11111111-1f52-4a8e-9a57-4a3c6f1f0c11"
	if got := api.api("originate {origination_uuid=" + first + "}loopback/+15550001001/acme &park()"); got != "+OK "+first+"\n" {
		t.Fatalf("first call: %q", got)
	}
	if got := limitEvent(t, rc); got != "acme outbound 1 0 2 2" {
		t.Fatalf("tenant usage %q", got)
	}
	if got := limitEvent(t, rc); got != "trunk carrier 1 0 1 1" {
		t.Fatalf("trunk usage %q (the call that fills the trunk carries usage == max)", got)
	}
	if s.LimitUsage("trunk", "carrier") != 1 {
		t.Fatalf("trunk usage %d", s.LimitUsage("trunk", "carrier"))
	}

	// The trunk is full: the second call counts for the tenant, is not
	// bridged, and ends with the dialplan's hangup; no trunk event.
	if got := api.api("originate loopback/+15550001002/acme &park()"); got != "-ERR NORMAL_TEMPORARY_FAILURE\n" {
		t.Fatalf("second call: %q", got)
	}
	if got := limitEvent(t, rc); got != "acme outbound 2 0 2 2" {
		t.Fatalf("tenant usage %q", got)
	}
	wait.Until(t, 5*time.Second, "the refused call's tenant usage released", func() bool { return s.LimitUsage("acme", "outbound") == 1 })

	// The trunk's refused increment fired nothing: the next event is the
	// test's own marker.
	s.FireLimitUsage("marker", "x", 1, 0, -1)
	if got := limitEvent(t, rc); got != "marker x 1 0 -1 0" {
		t.Fatalf("an over-limit attempt fired an event, or a counter is formatted wrongly: %q", got)
	}

	// Hanging up the first call frees the trunk: the next call fills it again.
	if err := s.Hangup(first, ""); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 5*time.Second, "usage released on hangup", func() bool { return s.LimitUsage("trunk", "carrier") == 0 && s.LimitUsage("acme", "outbound") == 0 })
	if got := api.api("originate loopback/+15550001001/acme &park()"); !strings.HasPrefix(got, "+OK ") {
		t.Fatalf("third call: %q", got)
	}
	if a, b := limitEvent(t, rc), limitEvent(t, rc); a != "acme outbound 1 0 2 2" || b != "trunk carrier 1 0 1 1" {
		t.Fatalf("after the hangup: %q %q", a, b)
	}

	// A connection subscribed to another subclass gets none of them: after
	// the channels' events its next is the gateway's.
	s.EmitEvent("CUSTOM", []Header{{"Event-Subclass", "sofia::gateway_state"}, {"Gateway", "carrier"}, {"State", "REGED"}}, "")
	for {
		h, _ := other.event()
		if h.Get("Event-Name") == "CHANNEL_CREATE" {
			continue
		}
		if h.Get("Event-Subclass") != "sofia%3A%3Agateway_state" {
			t.Fatalf("a connection subscribed to sofia::gateway_state got %v", h)
		}
		break
	}
}

// TestLimitRefusesOverTheTenantsMaximum: the limit application over its
// maximum hangs up with the cause after "!", and fires nothing.
func TestLimitRefusesOverTheTenantsMaximum(t *testing.T) {
	s := startFake(t, Options{XMLCurlURL: limitedDialplan(t)})
	rc := dialAuthed(t, s.Addr())
	rc.command("event plain CUSTOM limit::usage")
	api := dialAuthed(t, s.Addr())
	// Two live channels hold the tenant's two calls.
	for range 2 {
		id, err := s.CreateChannel(ChannelSpec{CIDNum: "1001", Dest: "+15550001001", Context: "acme"})
		if err != nil {
			t.Fatal(err)
		}
		if !s.limitIncr(id, limitHold{"acme", "outbound"}, 2) {
			t.Fatal("increment refused under the maximum")
		}
		limitEvent(t, rc)
	}
	if got := api.api("originate loopback/+15550001001/acme &park()"); got != "-ERR USER_BUSY\n" {
		t.Fatalf("over the tenant's limit: %q", got)
	}
	s.FireLimitUsage("marker", "y", 3, 0, 4)
	if got := limitEvent(t, rc); got != "marker y 3 0 4 4" {
		t.Fatalf("the refused call fired %q", got)
	}
}

package routes_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/platform/wait"
)

// openStream opens the SSE stream with key and returns its reader.
func openStream(t *testing.T, e *callEnv, key string, headers ...string) (*bufio.Reader, *http.Response) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", e.URL+"/api/telephony/events", nil)
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 {
		t.Fatalf("stream status %d", resp.StatusCode)
	}
	rd := bufio.NewReader(resp.Body)
	if line, _ := rd.ReadString('\n'); line != ": connected\n" {
		t.Fatalf("first line %q", line)
	}
	return rd, resp
}

func getCall(t *testing.T, e *callEnv, loc, key string) map[string]any {
	t.Helper()
	return e.Do(t, "GET", loc, key, nil).Expect(t, 200).Map(t)
}

func waitCallState(t *testing.T, e *callEnv, loc, state string, within time.Duration) map[string]any {
	t.Helper()
	var call map[string]any
	wait.Until(t, within, "call "+state, func() bool {
		call = getCall(t, e, loc, e.user)
		return call["state"] == state
	})
	return call
}

// TestCallResourceFollowsTheCallback: the 202 names the call resource; it
// goes queued → ringing_origin → origin_answered → ringing_destination →
// bridged → ended with both legs' channels and timestamps, and the same
// changes stream on SSE.
func TestCallResourceFollowsTheCallback(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		routedCallEnv(t, e)
		rd, _ := openStream(t, e, e.tenantKey)
		r := e.Do(t, "POST", "/api/telephony/call", e.user, map[string]any{"from": testMobile, "to": "1002"}).Expect(t, 202)
		placed := r.Map(t)
		loc := r.Header.Get("Location")
		if loc != "/api/telephony/calls/"+placed["id"].(string) || placed["state"] != "queued" {
			t.Fatalf("Location %q, body %v", loc, placed)
		}
		waitCallState(t, e, loc, "bridged", 5*time.Second)
		// A leg's channel id is the tracker's, shown once the tracker has
		// applied that channel's events: those are consumed off the call
		// events' path, so on a loaded host the call may read bridged a
		// moment before its destination channel is known.
		var call map[string]any
		wait.Until(t, 5*time.Second, "the bridged call's destination channel", func() bool {
			call = getCall(t, e, loc, e.user)
			return call["destination_channel"] != ""
		})
		callee := findChannel(t, e.fs, "sofia/internal/1002-"+e.tenant+"@")
		if call["origin_channel"] != placed["channel"] || call["destination_uuid"] != callee.UUID ||
			!strings.HasPrefix(call["destination_channel"].(string), "SIP/") || call["tenant"] != e.tenant {
			t.Errorf("bridged call %v", call)
		}
		for _, k := range []string{"created_at", "ringing_origin_at", "origin_answered_at", "ringing_destination_at", "bridged_at"} {
			if call[k] == nil {
				t.Errorf("no %s: %v", k, call)
			}
		}
		if err := e.fs.Hangup(call["origin_uuid"].(string), ""); err != nil {
			t.Fatal(err)
		}
		if done := waitCallState(t, e, loc, "ended", 5*time.Second); done["ended_at"] == nil || done["failed_leg"] != nil {
			t.Errorf("ended call %v", done)
		}
		// Another tenant's key does not see it.
		other := e.KeyFor(t, map[string]any{"tenant": e.Tenant(t, "othr")})
		e.Do(t, "GET", loc, other, nil).Expect(t, 404)

		var states []string
		for !slices.Contains(states, "ended") {
			event, data := readEvent(t, rd)
			if event != "call.updated" {
				continue
			}
			var msg struct {
				Call map[string]any `json:"call"`
			}
			if err := json.Unmarshal([]byte(data), &msg); err != nil || msg.Call["id"] != placed["id"] {
				t.Fatalf("call event %s: %v", data, err)
			}
			if s := msg.Call["state"].(string); len(states) == 0 || states[len(states)-1] != s {
				states = append(states, s)
			}
		}
		want := []string{"queued", "ringing_origin", "origin_answered", "ringing_destination", "bridged", "ended"}
		if !slices.Equal(states, want) {
			t.Errorf("streamed states %q, want %q", states, want)
		}
	})
}

// TestRefusedCallFailsWithFreeSWITCHsText: FreeSWITCH answers the
// originate -ERR CALL_REJECTED (the user may not call mobiles): within a
// second the call is failed on its origin leg with that cause and text.
func TestRefusedCallFailsWithFreeSWITCHsText(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		routedCallEnv(t, e)
		e.Do(t, "PUT", "/api/tenants/"+e.tenant+"/extensions/1001", e.Key, map[string]any{"call_permission": "internal"}).Expect(t, 200)
		r := e.Do(t, "POST", "/api/telephony/call", e.user, map[string]any{"from": testMobile, "to": "1002"}).Expect(t, 202)
		call := waitCallState(t, e, r.Header.Get("Location"), "failed", time.Second)
		var reason any
		wait.Until(t, time.Second, "FreeSWITCH's text", func() bool {
			call = getCall(t, e, r.Header.Get("Location"), e.user)
			reason = call["reason"]
			return reason != nil
		})
		if call["failed_leg"] != "origin" || call["hangup_cause"] != "CALL_REJECTED" || reason != "-ERR CALL_REJECTED" {
			t.Errorf("failed call %v", call)
		}
	})
}

// TestCallToNowhereFailsOnItsDestination: the mobile answers, the dialled
// number has no route in the tenant: failed on the destination leg.
func TestCallToNowhereFailsOnItsDestination(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		routedCallEnv(t, e)
		r := e.Do(t, "POST", "/api/telephony/call", e.user, map[string]any{"from": testMobile, "to": "7777"}).Expect(t, 202)
		call := waitCallState(t, e, r.Header.Get("Location"), "failed", 5*time.Second)
		if call["failed_leg"] != "destination" || call["hangup_cause"] == "" || call["origin_answered_at"] == nil {
			t.Errorf("failed call %v", call)
		}
	})
}

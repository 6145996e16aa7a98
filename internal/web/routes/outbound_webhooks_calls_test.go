package routes_test

import (
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

// A call simulated on the fake FreeSWITCH reaches a tenant webhook as
// call.started, call.answered and call.ended, in that order, each once and
// signed, with distinct event ids and the same channel; a webhook that
// subscribed with the field guide's name call.created gets call.started.
// Each delivery's log shows its one attempt.
func TestOutboundWebhookCallLifecycle(t *testing.T) {
	for _, be := range apptest.Envs(t) {
		t.Run(be.Name, func(t *testing.T) {
			fs := startFake(t)
			env := map[string]string{"SWITCHBOARD_ESL_NODES": fs.Addr(), "SWITCHBOARD_RECORDINGS_DIR": "/rec"}
			maps.Copy(env, hookEnv)
			s := apptest.Start(t, be, env)
			e := setupCallEnv(t, s, fs)
			waitEvents(t, fs, 1)
			recv, alias := newReceiver(t), newReceiver(t)
			base := "/api/tenants/" + e.tenant + "/outbound_webhooks/"
			id, secret := createHook(t, s, base, map[string]any{"name": "calls", "url": recv.URL + "/hook",
				"events": []string{"call.started", "call.answered", "call.ended"}})
			createHook(t, s, base, map[string]any{"name": "guide", "url": alias.URL + "/hook", "events": []string{"call.created"}})

			uuid, err := fs.CreateChannel(fakefs.ChannelSpec{CIDNum: "+27215550123", Dest: "1001", Context: e.tenant,
				Vars: []fakefs.Header{{Name: "sb_tenant", Value: e.tenant}}})
			if err != nil {
				t.Fatal(err)
			}
			recv.waitFor(t, "call.started", func(g []received) bool { return len(g) >= 1 })
			if err := fs.Answer(uuid); err != nil {
				t.Fatal(err)
			}
			recv.waitFor(t, "call.answered", func(g []received) bool { return len(g) >= 2 })
			if err := fs.Hangup(uuid, "NORMAL_CLEARING"); err != nil {
				t.Fatal(err)
			}
			got := recv.waitFor(t, "call.ended", func(g []received) bool { return len(g) >= 3 })
			time.Sleep(500 * time.Millisecond) // a repeat would show now
			if got = recv.requests(); len(got) != 3 {
				t.Fatalf("%d deliveries, want 3", len(got))
			}
			ids := map[string]bool{}
			var channel any
			for i, want := range []string{"call.started", "call.answered", "call.ended"} {
				g := got[i]
				checkSigned(t, g, secret)
				ev := decodeEvent(t, g.Body)
				if g.Event != want || ev.Type != want || ev.Tenant != e.tenant || ev.Data["uuid"] != uuid || ev.Data["caller_id_number"] != "+27215550123" {
					t.Fatalf("delivery %d: %s (header %s), want %s of %s", i, g.Body, g.Event, want, uuid)
				}
				if i == 0 {
					channel = ev.Data["channel_id"]
				} else if ev.Data["channel_id"] != channel {
					t.Errorf("%s names channel %v, call.started %v", want, ev.Data["channel_id"], channel)
				}
				if ids[g.ID] {
					t.Errorf("event id %s sent for two events", g.ID)
				}
				ids[g.ID] = true
			}
			if ev := decodeEvent(t, got[1].Body); ev.Data["answered_at"] == nil || ev.Data["state"] != "answered" {
				t.Errorf("call.answered data %s", got[1].Body)
			}
			if a := alias.waitFor(t, "call.created", func(g []received) bool { return len(g) >= 1 }); decodeEvent(t, a[0].Body).Type != "call.started" {
				t.Errorf("call.created webhook got %s", a[0].Body)
			}
			time.Sleep(200 * time.Millisecond)
			if n := len(alias.requests()); n != 1 {
				t.Errorf("call.created webhook got %d requests, want 1", n)
			}

			// The delivery log: three deliveries, each with its attempt.
			var log []map[string]any
			wait.Until(t, 10*time.Second, "three succeeded deliveries", func() bool {
				s.Do(t, "GET", fmt.Sprintf("%s%d/deliveries", base, id), s.Key, nil).Expect(t, 200).JSON(t, &log)
				ok := 0
				for _, d := range log {
					if d["status"] == "succeeded" {
						ok++
					}
				}
				return ok == 3
			})
			for _, d := range log {
				h, _ := d["attempt_history"].([]any)
				if len(h) != 1 {
					t.Fatalf("delivery %v: history %v, want one attempt", d["event_type"], d["attempt_history"])
				}
				a := h[0].(map[string]any)
				if a["attempt"].(float64) != 1 || a["response_status"].(float64) != 200 || a["error"] != "" || a["at"] == "" {
					t.Errorf("delivery %v attempt %v", d["event_type"], a)
				}
			}
		})
	}
}

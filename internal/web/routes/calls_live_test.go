package routes_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/platform/racecheck"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

func TestIdempotentCall(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		body := map[string]any{"from": testMobile, "to": "1002"}
		h := map[string]string{"X-API-Key": e.user, "Idempotency-Key": "retry-me-1"}
		first := e.DoHeaders(t, "POST", "/api/telephony/call", h, body).Expect(t, 202)
		second := e.DoHeaders(t, "POST", "/api/telephony/call", h, body).Expect(t, 202)
		if string(first.Body) != string(second.Body) {
			t.Errorf("retry answered differently:\n%s\n%s", first.Body, second.Body)
		}
		if second.Header.Get("Idempotent-Replayed") != "true" || first.Header.Get("Idempotent-Replayed") != "" {
			t.Errorf("Idempotent-Replayed first %q second %q", first.Header.Get("Idempotent-Replayed"), second.Header.Get("Idempotent-Replayed"))
		}
		r := e.DoHeaders(t, "POST", "/api/telephony/call", h, map[string]any{"from": testMobile, "to": "1003"}).Expect(t, 422)
		if r.Code(t) != "idempotency_key_reused" {
			t.Errorf("code %q", r.Code(t))
		}
		// Keys are scoped per API key: another key with the same value acts.
		other := e.KeyFor(t, map[string]any{"tenant": e.tenant, "extension": "1001"})
		e.DoHeaders(t, "POST", "/api/telephony/call", map[string]string{"X-API-Key": other, "Idempotency-Key": "retry-me-1"}, body).Expect(t, 202)
		waitCommand(t, e.fs, "bgapi originate")
		waitCommand(t, e.fs, "bgapi originate")
		time.Sleep(50 * time.Millisecond) // let a wrongly repeated originate arrive
		if n := countPrefix(e.fs.Commands(), "bgapi originate"); n != 2 {
			t.Errorf("fake received %d originates, want 2 (one per API key)", n)
		}
	})
}

func TestEventStreamIsTenantScoped(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		other := e.Tenant(t, "othr")
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", e.URL+"/api/telephony/events", nil)
		req.Header.Set("X-API-Key", e.tenantKey)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			t.Fatalf("status %d type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		rd := bufio.NewReader(resp.Body)
		if line, _ := rd.ReadString('\n'); line != ": connected\n" {
			t.Fatalf("first line %q", line)
		}
		// Another tenant's call first, then ours: the first event seen must be ours.
		if _, err := e.fs.CreateChannel(fakefs.ChannelSpec{CIDNum: "2001", Dest: "1", Context: other, Vars: []fakefs.Header{{Name: "sb_tenant", Value: other}}}); err != nil {
			t.Fatal(err)
		}
		mine, err := e.fs.CreateChannel(fakefs.ChannelSpec{CIDNum: "1001", Dest: "1", Context: e.tenant, Vars: []fakefs.Header{{Name: "sb_tenant", Value: e.tenant}}})
		if err != nil {
			t.Fatal(err)
		}
		event, data := readEvent(t, rd)
		var ch struct {
			Type    string         `json:"type"`
			Channel map[string]any `json:"channel"`
		}
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			t.Fatalf("data %q: %v", data, err)
		}
		if event != "channel.created" || ch.Type != event || ch.Channel["uuid"] != mine || ch.Channel["tenant"] != e.tenant {
			t.Fatalf("event %q data %s", event, data)
		}
		// Another tenant's key may not pick ours; a client not accepting SSE gets 406.
		otherKey := e.KeyFor(t, map[string]any{"tenant": other})
		e.DoHeaders(t, "GET", "/api/telephony/events?tenant="+e.tenant, map[string]string{"X-API-Key": otherKey, "Accept": "text/event-stream"}, nil).Expect(t, 403)
		e.Do(t, "GET", "/api/telephony/events", e.tenantKey, nil).Expect(t, 406)
	})
}

// readEvent returns the next SSE message's event name and data, skipping comments.
func readEvent(t *testing.T, rd *bufio.Reader) (event, data string) {
	t.Helper()
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		case line == "" && event != "":
			return event, data
		}
	}
}

func TestResyncAfterFreeSWITCHRestart(t *testing.T) {
	if racecheck.Enabled {
		// A restart can close a connection while eslgo v1.5.2 is still
		// authenticating it; eslgo's own close then races its unlocked auth
		// goroutine. `make test` runs this test again without -race.
		t.Skip("skipped under -race: eslgo closing a connection mid-authentication races inside eslgo")
	}
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		// A call up for a minute (so older than the resync's grace for
		// calls racing their first event), which will end while no one listens.
		gone := "0a0a0a0a-1111-4222-8333-444455556666"
		e.fs.EmitEvent("CHANNEL_CREATE", []fakefs.Header{
			{Name: "Unique-ID", Value: gone}, {Name: "Channel-Name", Value: "sofia/internal/1001@fs1"},
			{Name: "Call-Direction", Value: "inbound"}, {Name: "Answer-State", Value: "answered"},
			{Name: "Caller-Caller-ID-Number", Value: "1001"}, {Name: "Caller-Context", Value: e.tenant},
			{Name: "Caller-Channel-Created-Time", Value: strconv.FormatInt(time.Now().Add(-time.Minute).UnixMicro(), 10)},
			{Name: "variable_sb_tenant", Value: e.tenant},
		}, "")
		e.waitChannel(t, gone)
		stay, stayUUID := e.liveChannel(t, e.tenant, "1002")
		e.fs.Close()
		fresh, err := e.fs.CreateChannel(fakefs.ChannelSpec{CIDNum: "1003", Dest: "5550000", Context: e.tenant, Answer: true,
			Vars: []fakefs.Header{{Name: "sb_tenant", Value: e.tenant}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.fs.Restart(); err != nil {
			t.Fatal(err)
		}
		var last string
		defer func() {
			if t.Failed() {
				t.Logf("last list: %s", last)
			}
		}()
		wait.Until(t, 15*time.Second, "resynced list", func() bool {
			var list []map[string]any
			r := e.Do(t, "GET", "/api/telephony/channels", e.tenantKey, nil).Expect(t, 200)
			last = string(r.Body)
			r.JSON(t, &list)
			uuids := map[any]bool{}
			for _, ch := range list {
				uuids[ch["uuid"]] = true
			}
			return len(list) == 2 && uuids[stayUUID] && uuids[fresh] && !uuids[gone]
		})
		e.Do(t, "GET", "/api/telephony/channels/"+stay, e.tenantKey, nil).Expect(t, 200)
		// The call that ended while away still gets its CDR.
		var list []map[string]any
		wait.Until(t, 5*time.Second, "cdr of the vanished call", func() bool {
			e.Do(t, "GET", "/api/reports/cdrs", e.tenantKey, nil).Expect(t, 200).JSON(t, &list)
			return len(list) == 1 && list[0]["uuid"] == gone
		})
		if list[0]["hangup_cause"] != "UNKNOWN_ENDED_WHILE_DISCONNECTED" {
			t.Errorf("cdr %v", list[0])
		}
	})
}

func TestDuplicateEventsEndToEnd(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		id, uuid := e.liveChannel(t, e.tenant, "1001")
		// A replayed CHANNEL_CREATE must not create a second channel or id.
		e.fs.EmitEvent("CHANNEL_CREATE", []fakefs.Header{
			{Name: "Unique-ID", Value: uuid}, {Name: "Channel-Name", Value: "sofia/internal/1001@fs1"},
			{Name: "Caller-Context", Value: e.tenant}, {Name: "variable_sb_tenant", Value: e.tenant},
			{Name: "variable_sb_ext", Value: "1001"}, {Name: "Call-Direction", Value: "inbound"},
		}, "")
		second, _ := e.liveChannel(t, e.tenant, "1002") // a barrier: later events are applied
		var list []map[string]any
		r := e.Do(t, "GET", "/api/telephony/channels", e.tenantKey, nil).Expect(t, 200)
		r.JSON(t, &list)
		if len(list) != 2 || list[0]["id"] != id || list[1]["id"] != second {
			t.Errorf("after a duplicate event: %s", r.Body)
		}
	})
}

func TestEventLeaseTakeover(t *testing.T) {
	t.Parallel()
	for _, be := range apptest.Envs(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			if be.RedisURL == "" {
				be.RedisURL = "redis://" + miniredis.RunT(t).Addr() + "/0"
			}
			fs := startFake(t)
			env := map[string]string{"SWITCHBOARD_ESL_NODES": fs.Addr()}
			var b *apptest.Server
			parent := t
			t.Run("first replica", func(t *testing.T) {
				a := apptest.Start(t, be, env)
				waitEvents(t, fs, 1)
				b = apptest.Start(parent, be, env) // outlives this subtest
				wait.Until(t, 5*time.Second, "second command connection", func() bool { return len(fs.Conns()) >= 3 })
				time.Sleep(300 * time.Millisecond) // b would subscribe by now if it wrongly could
				waitEvents(t, fs, 1)
				e := setupCallEnv(t, a, fs)
				e.liveChannel(t, e.tenant, "1001")
			}) // a stops here: its lease is released
			waitEvents(t, fs, 1)
			e := setupCallEnv(t, b, fs)
			id, uuid := e.liveChannel(t, e.tenant, "1002")
			// b sends commands to the node too.
			e.Do(t, "POST", "/api/telephony/hangup", e.tenantKey, map[string]any{"channel": id}).Expect(t, 200)
			if got := waitCommand(t, fs, "api uuid_kill"); got != "api uuid_kill "+uuid {
				t.Errorf("got %q", got)
			}
		})
	}
}

// TestDirectoryChangeFlushesFreeSWITCHCache: a changed extension must not
// linger in FreeSWITCH's own user cache, so Switchboard tells every node to
// drop that user, and only that user; a change that does not reach the
// directory sends nothing.
//
// It runs alone: every server on the shared database dispatches every
// tenant's changes to its node, and another test's tenant update or delete
// flushes the whole cache (a bare xml_flush_cache), which this test must
// be able to tell apart from one its own tag change would wrongly send.
func TestDirectoryChangeFlushesFreeSWITCHCache(t *testing.T) {
	eachCallEnvAlone(t, func(t *testing.T, e *callEnv) {
		flushes := func() []string {
			var out []string
			for _, line := range e.fs.Commands() {
				if strings.HasPrefix(line, "api xml_flush_cache") {
					out = append(out, line)
				}
			}
			return out
		}
		user := "api xml_flush_cache id 1002-" + e.tenant + " sip.test"
		// Creating the extensions already flushed them; wait for that.
		wait.Until(t, 5*time.Second, "setup flushes", func() bool { return slices.Contains(flushes(), user) })
		time.Sleep(300 * time.Millisecond)
		before := len(flushes())
		e.Do(t, "POST", "/api/tenants/"+e.tenant+"/tags/", e.Key, map[string]any{"name": "vip"}).Expect(t, 201)
		e.Do(t, "PUT", "/api/tenants/"+e.tenant+"/extensions/1002", e.Key, map[string]any{"sip_secret": "a-new-secret-123456"}).Expect(t, 200)
		wait.Until(t, 5*time.Second, "xml_flush_cache after the change", func() bool { return len(flushes()) > before })
		time.Sleep(300 * time.Millisecond)
		if got := flushes()[before:]; len(got) != 1 || got[0] != user {
			t.Fatalf("flushes after the tag and the secret change: %q, want only %q", got, user)
		}
	})
}

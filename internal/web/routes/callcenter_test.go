package routes_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/media/mediatest"
	"github.com/switchboard/switchboard/internal/platform/racecheck"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

// callcenterCommands are the callcenter_config lines the fake received.
func callcenterCommands(fs *fakefs.Server) []string {
	var out []string
	for _, line := range fs.Commands() {
		if after, ok := strings.CutPrefix(line, "api callcenter_config "); ok {
			out = append(out, after)
		}
	}
	return out
}

// tenantCommands are the callcenter_config lines naming the tenant.
func tenantCommands(fs *fakefs.Server, tenant string) []string {
	var out []string
	for _, c := range callcenterCommands(fs) {
		if strings.Contains(c, "@"+tenant+" ") || strings.HasSuffix(c, "@"+tenant) {
			out = append(out, c)
		}
	}
	return out
}

// waitCallcenterResync waits until the server's resync of mod_callcenter
// on its node has ended n times (once per connection: at start, after a
// restart), done or failed. A test's own writes wait for the first: that
// resync reads every enabled tenant's queues and agents, and had it read
// this test's queue after its creation it would load the queue a second
// time beside the change's own command. (On the shared MySQL database it
// usually fails: the fake cannot load other tests' queues before the test
// gives it the /fs/xml URL.)
func (e *callEnv) waitCallcenterResync(t *testing.T, n int) {
	t.Helper()
	wait.Until(t, 60*time.Second, "the callcenter resync at connect", func() bool {
		done := 0
		for _, l := range e.Logs.Lines(t) {
			if (l["msg"] == "callcenter resync done" || l["msg"] == "callcenter resync") && l["node"] == e.fs.Addr() {
				done++
			}
		}
		return done >= n
	})
}

// waitCallcenter waits until the fake has received want (in order) after
// the first `from` callcenter commands, and nothing else.
// Only commands naming the tenant of want's first command count (from
// counts those too): the resync at connect reads lists and may settle other
// tests' tenants that share the database.
func waitCallcenter(t *testing.T, fs *fakefs.Server, from int, want ...string) int {
	t.Helper()
	_, tenant, _ := strings.Cut(want[0], "@")
	tenant, _, _ = strings.Cut(tenant, " ")
	mine := func() []string { return tenantCommands(fs, tenant) }
	var got []string
	wait.Until(t, 10*time.Second, "callcenter commands "+strings.Join(want, "; "), func() bool {
		got = mine()[from:]
		return len(got) >= len(want)
	})
	time.Sleep(200 * time.Millisecond)
	got = mine()[from:]
	if !slices.Equal(got, want) {
		t.Fatalf("callcenter commands\n got %q\nwant %q", got, want)
	}
	return from + len(got)
}

// TestQueueAndAgentChangesReachModCallcenter: queue and agent writes reach
// every connected node as callcenter_config commands, which the fake's
// mod_callcenter accepts: a new queue is loaded (the fake fetches its
// callcenter.conf through /fs/xml), an agent is added with its contact,
// settings, status and tier, a status change and a tier change send only
// the difference, a renumbered queue is unloaded and loaded with its
// agents' tiers again, a deleted agent and queue are removed.
func TestQueueAndAgentChangesReachModCallcenter(t *testing.T) {
	// Alone: a server connecting to its node resyncs every tenant's queues
	// there, so parallel servers crowd the commands this test waits for.
	eachCallEnvAlone(t, func(t *testing.T, e *callEnv) {
		e.waitCallcenterResync(t, 1)
		e.fs.SetXMLCurlURL(e.URL + "/fs/xml")
		base := "/api/tenants/" + e.tenant
		queue, agent := "640@"+e.tenant, "31@"+e.tenant
		q := e.Do(t, "POST", base+"/queues/", e.Key, map[string]any{"name": "support", "number": "640", "strategy": "top-down"}).Expect(t, 201).Map(t)
		n := waitCallcenter(t, e.fs, 0, "queue load "+queue)
		// The load fetches callcenter.conf after the command is logged.
		wait.Until(t, 10*time.Second, "the queue loaded from callcenter.conf", func() bool {
			p, ok := e.fs.CallcenterQueue(queue)
			return ok && p["strategy"] == "top-down"
		})
		a := e.Do(t, "POST", base+"/agents/", e.Key, map[string]any{
			"name": "Ann", "agent_number": "31", "extension": "1001", "status": "available", "wrap_up_seconds": 15,
			"queues": []any{map[string]any{"queue_id": q["id"], "level": 2, "position": 5}},
		}).Expect(t, 201).Map(t)
		n = waitCallcenter(t, e.fs, n,
			"agent add "+agent+" callback",
			"agent set contact "+agent+" user/1001-"+e.tenant+"@sip.test",
			"agent set max_no_answer "+agent+" 3",
			"agent set wrap_up_time "+agent+" 15",
			"agent set reject_delay_time "+agent+" 10",
			"agent set busy_delay_time "+agent+" 60",
			"agent set no_answer_delay_time "+agent+" 60",
			"agent set status "+agent+" Available",
			fmt.Sprintf("tier add %s %s 2 5", queue, agent))
		got, ok := e.fs.CallcenterAgent(agent)
		if !ok || got.Status != "Available" || got.Contact != "user/1001-"+e.tenant+"@sip.test" || got.Settings["wrap_up_time"] != "15" {
			t.Fatalf("agent in mod_callcenter: %+v", got)
		}
		agentPath := fmt.Sprintf("%s/agents/%v", base, a["id"])
		e.Do(t, "PUT", agentPath, e.Key, map[string]any{"status": "on_break"}).Expect(t, 200)
		n = waitCallcenter(t, e.fs, n, "agent set status "+agent+" 'On Break'")
		if got, _ := e.fs.CallcenterAgent(agent); got.Status != "On Break" {
			t.Fatalf("status %q", got.Status)
		}
		e.Do(t, "PUT", agentPath, e.Key, map[string]any{"queues": []any{map[string]any{"queue_id": q["id"], "level": 1, "position": 5}}}).Expect(t, 200)
		n = waitCallcenter(t, e.fs, n, fmt.Sprintf("tier set level %s %s 1", queue, agent), fmt.Sprintf("tier set position %s %s 5", queue, agent))
		e.Do(t, "PUT", fmt.Sprintf("%s/queues/%v", base, q["id"]), e.Key, map[string]any{"number": "641"}).Expect(t, 200)
		moved := "641@" + e.tenant
		n = waitCallcenter(t, e.fs, n, "queue unload "+queue, "queue load "+moved, fmt.Sprintf("tier add %s %s 1 5", moved, agent))
		if tiers := e.fs.CallcenterTiers(); !slices.Contains(tiers, fakefs.CCTier{Queue: moved, Agent: agent, Level: 1, Position: 5}) {
			t.Fatalf("tiers after the renumbering: %+v", tiers)
		}
		e.Do(t, "PUT", fmt.Sprintf("%s/queues/%v", base, q["id"]), e.Key, map[string]any{"max_wait_seconds": 60}).Expect(t, 200)
		n = waitCallcenter(t, e.fs, n, "queue reload "+moved)
		// The reload fetches callcenter.conf after the command is logged.
		wait.Until(t, 10*time.Second, "the reloaded queue params", func() bool {
			p, _ := e.fs.CallcenterQueue(moved)
			return p["max-wait-time"] == "60"
		})
		e.Do(t, "DELETE", agentPath, e.Key, nil).Expect(t, 204)
		n = waitCallcenter(t, e.fs, n, "agent del "+agent)
		e.Do(t, "DELETE", fmt.Sprintf("%s/queues/%v", base, q["id"]), e.Key, nil).Expect(t, 204)
		waitCallcenter(t, e.fs, n, "queue unload "+moved)
		if _, ok := e.fs.CallcenterAgent(agent); ok || len(tenantTiers(e.fs, e.tenant)) != 0 {
			t.Fatal("agent or tiers left in mod_callcenter")
		}
		if _, ok := e.fs.CallcenterQueue(moved); ok {
			t.Fatal("queue left loaded")
		}
	})
}

// TestCallcenterCommandRetried: a node refusing a command makes the change
// be delivered again until it is accepted; the redelivered "agent add"
// finds the agent there and goes on.
func TestCallcenterCommandRetried(t *testing.T) {
	// Alone: every live server sends its tenants' callcenter commands, and other tests' resyncs crowd the command log this test waits in.
	eachCallEnvAlone(t, func(t *testing.T, e *callEnv) {
		e.waitCallcenterResync(t, 1)
		e.fs.SetXMLCurlURL(e.URL + "/fs/xml")
		base := "/api/tenants/" + e.tenant
		agent := "32@" + e.tenant
		e.fs.SetAPIReply("callcenter_config agent set status", "-ERR Unknown Error!\n")
		e.Do(t, "POST", base+"/agents/", e.Key, map[string]any{"name": "Bo", "agent_number": "32", "extension": "1002", "status": "available"}).Expect(t, 201)
		waitCommand(t, e.fs, "api callcenter_config agent set status "+agent)
		if got, _ := e.fs.CallcenterAgent(agent); got.Status != "Logged Out" {
			t.Fatalf("status %q before the retry", got.Status)
		}
		e.fs.ClearAPIReplies()
		wait.Until(t, 15*time.Second, "the retried status", func() bool {
			got, _ := e.fs.CallcenterAgent(agent)
			return got.Status == "Available"
		})
		adds := 0
		for _, c := range callcenterCommands(e.fs) {
			if c == "agent add "+agent+" callback" {
				adds++
			}
		}
		if adds < 2 {
			t.Errorf("agent add sent %d times, want the redelivery too", adds)
		}
	})
}

// TestAgentStatusEndpoint: POST …/agents/<id>/status stores the status and
// break reason and mod_callcenter on the node receives it; a bad status or
// field is a 400 that changes nothing; another tenant's agent is not found.
func TestAgentStatusEndpoint(t *testing.T) {
	// Alone: a server connecting to its node resyncs every tenant's queues
	// there, so parallel servers crowd the commands this test waits for.
	eachCallEnvAlone(t, func(t *testing.T, e *callEnv) {
		e.waitCallcenterResync(t, 1)
		base := "/api/tenants/" + e.tenant
		agent := "33@" + e.tenant
		a := e.Do(t, "POST", base+"/agents/", e.Key, map[string]any{"name": "Cy", "agent_number": "33", "extension": "1001"}).Expect(t, 201).Map(t)
		waitCommand(t, e.fs, "api callcenter_config agent set status "+agent+" 'Logged Out'")
		n := len(tenantCommands(e.fs, e.tenant))
		path := fmt.Sprintf("%s/agents/%v/status", base, a["id"])
		got := e.Do(t, "POST", path, e.tenantKey, map[string]any{"status": "on_break", "break_reason": "lunch"}).Expect(t, 200).Map(t)
		if got["status"] != "on_break" || got["break_reason"] != "lunch" || got["agent_number"] != "33" {
			t.Fatalf("answer %v", got)
		}
		n = waitCallcenter(t, e.fs, n, "agent set status "+agent+" 'On Break'")
		if ag, _ := e.fs.CallcenterAgent(agent); ag.Status != "On Break" {
			t.Fatalf("mod_callcenter status %q", ag.Status)
		}
		fieldError(t, e.Do(t, "POST", path, e.tenantKey, map[string]any{"status": "asleep"}), "status", "on_break")
		fieldError(t, e.Do(t, "POST", path, e.tenantKey, map[string]any{"status": "available", "colour": "red"}), "colour", "unknown field")
		fieldError(t, e.Do(t, "POST", path, e.tenantKey, map[string]any{}), "status", "required")
		e.Do(t, "POST", path, e.tenantKey, map[string]any{"status": "available"}).Expect(t, 200)
		waitCallcenter(t, e.fs, n, "agent set status "+agent+" Available")
		if rec := e.Do(t, "GET", fmt.Sprintf("%s/agents/%v", base, a["id"]), e.Key, nil).Expect(t, 200).Map(t); rec["status"] != "available" || rec["break_reason"] != nil {
			t.Errorf("stored %v", rec)
		}
		other := e.Tenant(t, "other")
		e.Do(t, "POST", fmt.Sprintf("/api/tenants/%s/agents/%v/status", other, a["id"]), e.Key, map[string]any{"status": "available"}).Expect(t, 404)
	})
}

// featureEvent fires what FreeSWITCH's event application fires for a
// feature code dialled by extension ext (the dialplan's featureEvent).
func featureEvent(e *callEnv, ext, feature, arg string) {
	h := []fakefs.Header{{Name: "Event-Subclass", Value: "switchboard::feature"}, {Name: "sb_feature", Value: feature},
		{Name: "Unique-ID", Value: "feature-call-" + feature}, {Name: "variable_sb_tenant", Value: e.tenant}, {Name: "variable_sb_ext", Value: ext}}
	if arg != "" {
		h = append(h, fakefs.Header{Name: "sb_arg", Value: arg})
	}
	e.fs.EmitEvent("CUSTOM", h, "")
}

// TestFeatureCodesAct: star-code events from the node's event stream change
// the configuration through the store: DND and forwards on the caller's
// extension (FreeSWITCH's user cache is flushed, as after any directory
// change), office mode, and the caller's agent status (which reaches
// mod_callcenter).
func TestFeatureCodesAct(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		e.waitCallcenterResync(t, 1)
		base := "/api/tenants/" + e.tenant
		ext := func() map[string]any {
			return e.Do(t, "GET", base+"/extensions/1001", e.Key, nil).Expect(t, 200).Map(t)
		}
		flushes := func() int {
			n := 0
			for _, c := range e.fs.Commands() {
				if c == "api xml_flush_cache id 1001-"+e.tenant+" sip.test" {
					n++
				}
			}
			return n
		}
		wait.Until(t, 10*time.Second, "setup flush", func() bool { return flushes() > 0 })
		before := flushes()
		featureEvent(e, "1001", "dnd_toggle", "")
		wait.Until(t, 10*time.Second, "dnd on", func() bool { return ext()["dnd"] == true })
		wait.Until(t, 10*time.Second, "user cache flushed after *78", func() bool { return flushes() > before })
		featureEvent(e, "1001", "forward_all_on", "0825550123")
		wait.Until(t, 10*time.Second, "forward on", func() bool {
			fw, _ := ext()["forward_all"].(map[string]any)
			return fw["enabled"] == true && fw["destination"] == "0825550123"
		})
		featureEvent(e, "1001", "forward_all_off", "")
		wait.Until(t, 10*time.Second, "forward off", func() bool {
			fw, _ := ext()["forward_all"].(map[string]any)
			return fw["enabled"] == false && fw["destination"] == "0825550123"
		})
		featureEvent(e, "1001", "office_mode_night", "")
		wait.Until(t, 10*time.Second, "office mode night", func() bool {
			return e.Do(t, "GET", base+"/office_mode", e.Key, nil).Expect(t, 200).Map(t)["mode"] == "night"
		})
		agent := "35@" + e.tenant
		a := e.Do(t, "POST", base+"/agents/", e.Key, map[string]any{"name": "Di", "agent_number": "35", "extension": "1001"}).Expect(t, 201).Map(t)
		waitCommand(t, e.fs, "api callcenter_config agent set status "+agent+" 'Logged Out'")
		status := func() any {
			return e.Do(t, "GET", fmt.Sprintf("%s/agents/%v", base, a["id"]), e.Key, nil).Expect(t, 200).Map(t)["status"]
		}
		featureEvent(e, "1001", "agent_login_logout", "")
		wait.Until(t, 10*time.Second, "agent logged in", func() bool { return status() == "available" })
		waitCommand(t, e.fs, "api callcenter_config agent set status "+agent+" Available")
		featureEvent(e, "1001", "agent_pause_toggle", "")
		wait.Until(t, 10*time.Second, "agent paused", func() bool { return status() == "on_break" })
		wait.Until(t, 10*time.Second, "mod_callcenter on break", func() bool {
			got, _ := e.fs.CallcenterAgent(agent)
			return got.Status == "On Break"
		})
		featureEvent(e, "1001", "agent_login_logout", "")
		wait.Until(t, 10*time.Second, "agent logged out", func() bool { return status() == "logged_out" })

		// *732: the node recorded into the media library; the event makes
		// it a voice prompt (converted where uploads go), the recording
		// itself is removed.
		const uuid = "5d0c1f9e-4a3b-4c2d-9e8f-7a6b5c4d3e2f"
		raw := filepath.Join(e.Cfg.Media.Dir, e.tenant, "phone", uuid+".wav")
		if err := os.MkdirAll(filepath.Dir(raw), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(raw, mediatest.Tone(t, "rec.wav", 1), 0o644); err != nil {
			t.Fatal(err)
		}
		e.fs.EmitEvent("CUSTOM", []fakefs.Header{{Name: "Event-Subclass", Value: "switchboard::feature"}, {Name: "sb_feature", Value: "record_prompt"},
			{Name: "Unique-ID", Value: uuid}, {Name: "variable_sb_tenant", Value: e.tenant}, {Name: "variable_sb_ext", Value: "1001"}}, "")
		var prompt map[string]any
		wait.Until(t, 20*time.Second, "the recording became a voice prompt", func() bool {
			var list []map[string]any
			e.Do(t, "GET", base+"/voice_prompts/", e.Key, nil).Expect(t, 200).JSON(t, &list)
			if len(list) == 1 {
				prompt = list[0]
			}
			return prompt != nil
		})
		if prompt["source"] != "phone" || !strings.HasPrefix(fmt.Sprint(prompt["name"]), "Phone recording 1001 ") || prompt["duration_ms"] != float64(1000) {
			t.Fatalf("prompt %v", prompt)
		}
		if _, err := os.Stat(filepath.Join(e.Cfg.Media.Dir, e.tenant, fmt.Sprint(prompt["filename"]))); err != nil {
			t.Fatalf("the prompt's file: %v", err)
		}
		wait.Until(t, 10*time.Second, "the node's recording removed", func() bool {
			_, err := os.Stat(raw)
			return os.IsNotExist(err)
		})
	})
}

// TestCallcenterResyncAfterReconnectAndTenantDelete: changes made while the
// node's event socket was away reach mod_callcenter when it comes back (the
// resync compares its queue, agent and tier lists with the database): a
// queue deleted meanwhile is unloaded, a new queue loaded, an agent's new
// status and tier applied. Deleting the tenant then unloads its queues and
// deletes its agents on the node.
func TestCallcenterResyncAfterReconnectAndTenantDelete(t *testing.T) {
	if racecheck.Enabled {
		// The node's connections are dropped while the pool may be
		// authenticating them; eslgo v1.5.2's own close then races its
		// unlocked auth goroutine (seen in CI). `make test` runs this test
		// again without -race.
		t.Skip("skipped under -race: eslgo closing a connection mid-authentication races inside eslgo")
	}
	// Alone: a server connecting to its node resyncs every tenant's queues
	// there, so parallel servers crowd the commands this test waits for.
	eachCallEnvAlone(t, func(t *testing.T, e *callEnv) {
		e.waitCallcenterResync(t, 1)
		e.fs.SetXMLCurlURL(e.URL + "/fs/xml")
		base := "/api/tenants/" + e.tenant
		old, fresh, agent := "650@"+e.tenant, "651@"+e.tenant, "41@"+e.tenant
		q := e.Do(t, "POST", base+"/queues/", e.Key, map[string]any{"name": "old", "number": "650"}).Expect(t, 201).Map(t)
		a := e.Do(t, "POST", base+"/agents/", e.Key, map[string]any{"name": "Cy", "agent_number": "41", "extension": "1001", "status": "available",
			"queues": []any{map[string]any{"queue_id": q["id"]}}}).Expect(t, 201).Map(t)
		wait.Until(t, 10*time.Second, "the queue and agent on the node", func() bool {
			_, qok := e.fs.CallcenterQueue(old)
			return qok && slices.Contains(e.fs.CallcenterTiers(), fakefs.CCTier{Queue: old, Agent: agent, Level: 1, Position: 1})
		})

		// The node goes away; changes are made; the node comes back.
		if err := e.fs.Close(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond) // the pool sees its connections closed
		q2 := e.Do(t, "POST", base+"/queues/", e.Key, map[string]any{"name": "new", "number": "651", "strategy": "round-robin"}).Expect(t, 201).Map(t)
		e.Do(t, "PUT", fmt.Sprintf("%s/agents/%v", base, a["id"]), e.Key, map[string]any{"status": "on_break",
			"queues": []any{map[string]any{"queue_id": q2["id"], "level": 3, "position": 2}}}).Expect(t, 200)
		e.Do(t, "DELETE", fmt.Sprintf("%s/queues/%v", base, q["id"]), e.Key, nil).Expect(t, 204)
		time.Sleep(500 * time.Millisecond) // the changes are delivered (to no node)
		if _, ok := e.fs.CallcenterQueue(fresh); ok {
			t.Fatal("the new queue reached a node that was away")
		}
		if err := e.fs.Restart(); err != nil {
			t.Fatal(err)
		}
		// The pool redials with backoff and the resync fetches every queue
		// it loads through /fs/xml: on a loaded CI host that takes longer
		// than the other waits here.
		defer func() {
			if t.Failed() {
				t.Logf("node holds: tiers %v; commands %q", e.fs.CallcenterTiers(), callcenterCommands(e.fs))
			}
		}()
		wait.Until(t, 60*time.Second, "the resync", func() bool {
			_, oldLoaded := e.fs.CallcenterQueue(old)
			p, newLoaded := e.fs.CallcenterQueue(fresh)
			got, _ := e.fs.CallcenterAgent(agent)
			return !oldLoaded && newLoaded && p["strategy"] == "round-robin" && got.Status == "On Break" &&
				slices.Equal(tenantTiers(e.fs, e.tenant), []fakefs.CCTier{{Queue: fresh, Agent: agent, Level: 3, Position: 2}})
		})
		for _, want := range []string{"queue list", "agent list", "tier list", "queue unload " + old, "queue load " + fresh} {
			if !slices.Contains(callcenterCommands(e.fs), want) {
				t.Errorf("the resync did not send %q", want)
			}
		}

		// Deleting the tenant clears it from the node.
		e.Do(t, "DELETE", "/api/tenants/"+e.tenant, e.Key, nil).Expect(t, 204)
		wait.Until(t, 20*time.Second, "the tenant gone from mod_callcenter", func() bool {
			_, qok := e.fs.CallcenterQueue(fresh)
			_, aok := e.fs.CallcenterAgent(agent)
			return !qok && !aok && len(tenantTiers(e.fs, e.tenant)) == 0
		})
	})
}

// tenantTiers is the node's tiers of one tenant's queues: a resync loads
// every enabled tenant's queues, and other tests' tenants share the
// database.
func tenantTiers(fs *fakefs.Server, tenant string) []fakefs.CCTier {
	var out []fakefs.CCTier
	for _, t := range fs.CallcenterTiers() {
		if strings.HasSuffix(t.Queue, "@"+tenant) {
			out = append(out, t)
		}
	}
	return out
}

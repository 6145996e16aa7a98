package routes_test

import (
	"encoding/json"
	"fmt"
	"github.com/switchboard/switchboard/internal/platform/racecheck"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/comms/webhooks"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// systemWatch is a system webhook at a local receiver subscribed to
// events, and a tenant webhook of tenant subscribed to everything a tenant
// may take, to show that no system event reaches it.
type systemWatch struct {
	sys, ten *receiver
	secret   string
}

func watchSystem(t *testing.T, s *apptest.Server, tenant string, events ...string) *systemWatch {
	t.Helper()
	w := &systemWatch{sys: newReceiver(t, 200), ten: newReceiver(t, 200)}
	_, w.secret = createHook(t, s, "/api/system_webhooks/", map[string]any{"name": storetest.Name("sys"), "url": w.sys.URL, "events": events})
	// Every event a tenant webhook may take: the registry's enum.
	all := s.Store.Registry().Resource("outbound_webhooks").Field("events").Enum
	createHook(t, s, "/api/tenants/"+tenant+"/outbound_webhooks/", map[string]any{"name": "all", "url": w.ten.URL, "events": all})
	return w
}

// expect waits for a signed system event of type typ whose data match
// holds for, and returns it.
func (w *systemWatch) expect(t *testing.T, typ string, match func(data map[string]any) bool) eventBody {
	t.Helper()
	var found eventBody
	w.sys.waitFor(t, typ, func(got []received) bool {
		for _, g := range got {
			if g.Event != typ {
				continue
			}
			if e := decodeEvent(t, g.Body); e.Type == typ && match(e.Data) {
				checkSigned(t, g, w.secret)
				found = e
				return true
			}
		}
		return false
	})
	return found
}

// count is how many distinct system events of type typ whose data match
// were delivered (a redelivery has the same id).
func (w *systemWatch) count(t *testing.T, typ string, match func(data map[string]any) bool) int {
	t.Helper()
	ids := map[string]bool{}
	for _, g := range w.sys.requests() {
		if e := decodeEvent(t, g.Body); e.Type == typ && match(e.Data) {
			ids[e.ID] = true
		}
	}
	return len(ids)
}

// noneToTenants fails if the tenant webhook received any system event.
func (w *systemWatch) noneToTenants(t *testing.T) {
	t.Helper()
	for _, g := range w.ten.requests() {
		e := decodeEvent(t, g.Body)
		for _, sys := range webhooks.SystemEvents {
			if e.Type == sys {
				t.Fatalf("a tenant webhook received the system event %s", g.Body)
			}
		}
	}
}

// fieldIs matches event data whose field k is v (numbers compared as JSON).
func fieldIs(k string, v any) func(map[string]any) bool {
	want, _ := json.Marshal(v)
	return func(d map[string]any) bool {
		got, _ := json.Marshal(d[k])
		return string(got) == string(want)
	}
}

// TestSystemEventsAPIKeys: creating and revoking a key (through the API,
// and by deleting the extension a user key is bound to) each reach system
// webhooks once, without the key's value; tenant webhooks get none.
func TestSystemEventsAPIKeys(t *testing.T) {
	apptest.EachSerial(t, hookEnv, func(t *testing.T, s *apptest.Server) {
		ten := s.Tenant(t, "keyev")
		w := watchSystem(t, s, ten, "api_key.created", "api_key.revoked")
		created := s.Do(t, "POST", "/api/key/", s.Key, map[string]any{"name": "ops", "tenant": ten}).Expect(t, 201).Map(t)
		value, _ := created["key"].(string)
		id := created["id"]

		ev := w.expect(t, "api_key.created", fieldIs("id", id))
		if ev.Data["name"] != "ops" || ev.Data["tenant"] != ten || ev.Data["key_prefix"] != value[:8] {
			t.Fatalf("api_key.created data %v", ev.Data)
		}
		s.Do(t, "DELETE", fmt.Sprintf("/api/key/%v", id), s.Key, nil).Expect(t, 204)
		ev = w.expect(t, "api_key.revoked", fieldIs("id", id))
		if ev.Data["revoked_at"] == nil || ev.Data["reason"] == nil {
			t.Fatalf("api_key.revoked data %v", ev.Data)
		}
		// Revoking again changes nothing and tells nobody.
		s.Do(t, "DELETE", fmt.Sprintf("/api/key/%v", id), s.Key, nil).Expect(t, 204)

		// A user key dies with its extension.
		s.Do(t, "POST", "/api/tenants/"+ten+"/extensions/", s.Key, map[string]any{"name": "201"}).Expect(t, 201)
		user := s.Do(t, "POST", "/api/key/", s.Key, map[string]any{"name": "phone", "tenant": ten, "extension": "201"}).Expect(t, 201).Map(t)
		w.expect(t, "api_key.created", fieldIs("id", user["id"]))
		s.Do(t, "DELETE", "/api/tenants/"+ten+"/extensions/201", s.Key, nil).Expect(t, 204)
		ev = w.expect(t, "api_key.revoked", fieldIs("id", user["id"]))
		if r, _ := ev.Data["reason"].(string); !strings.Contains(r, "extension 201") {
			t.Fatalf("revoked with its extension: reason %v", ev.Data["reason"])
		}

		// A tenant webhook sees the key's configuration change, but no
		// system event; and no delivery carries a key's value.
		w.ten.waitFor(t, "the key's config.changed", func(g []received) bool { return len(g) > 0 })
		if n := w.count(t, "api_key.revoked", fieldIs("id", id)); n != 1 {
			t.Fatalf("api_key.revoked of key %v delivered as %d events", id, n)
		}
		w.noneToTenants(t)
		for _, g := range append(w.sys.requests(), w.ten.requests()...) {
			if strings.Contains(string(g.Body), value) {
				t.Fatalf("a delivery carries the key's value: %s", g.Body)
			}
		}
	})
}

// TestSystemEventsAdministratorLoginFailed: failed administrator sign-ins
// (HTTP Basic and the login form) reach system webhooks with the username
// and the client address, one event per administrator per minute however
// many guesses it took; tenant webhooks get none.
func TestSystemEventsAdministratorLoginFailed(t *testing.T) {
	apptest.EachSerial(t, hookEnv, func(t *testing.T, s *apptest.Server) {
		w := watchSystem(t, s, s.Tenant(t, "loginev"), "administrator.login_failed")
		basic, form := createAdmin(t, s, "platform_admin", nil), createAdmin(t, s, "platform_admin", nil)
		// The window is the clock's minute: keep the storm inside one.
		if sec := time.Now().Second(); sec > 45 {
			time.Sleep(time.Duration(61-sec) * time.Second)
		}
		for range 5 {
			s.DoHeaders(t, "GET", "/api/administrators/", basicAuth(basic, "not the password"), nil).Expect(t, 401)
		}
		s.DoHeaders(t, "GET", "/api/administrators/", basicAuth(basic, adminPassword), nil).Expect(t, 200)
		ev := w.expect(t, "administrator.login_failed", fieldIs("username", basic))
		if ev.Data["via"] != "basic" || ev.Data["remote_addr"] == "" || ev.Data["known_administrator"] != true ||
			ev.Data["reason"] != "password" || ev.Data["failures"] != float64(1) || ev.Tenant != "" {
			t.Fatalf("login_failed event %+v", ev)
		}
		if strings.Contains(fmt.Sprint(ev.Data), "not the password") {
			t.Fatalf("the event carries the password tried: %v", ev.Data)
		}

		postLogin(t, s, loginBody(form, "wrong again", "", ""), nil).Expect(t, 401)
		ev = w.expect(t, "administrator.login_failed", fieldIs("username", form))
		if ev.Data["via"] != "web_login" || ev.Data["remote_addr"] == "" {
			t.Fatalf("login_failed event of the form %+v", ev)
		}
		// The storm of five was one event.
		time.Sleep(500 * time.Millisecond)
		if n := w.count(t, "administrator.login_failed", fieldIs("username", basic)); n != 1 {
			t.Fatalf("five failures in a minute made %d events, want 1", n)
		}
		w.noneToTenants(t)
	})
}

// TestSystemEventsNodeConnectionAndServer: a FreeSWITCH node's event
// socket (the fake, over TCP) connecting, dropping and coming back is
// esl.connected / esl.disconnected once per change, not per reconnect
// attempt; a node gone longer than SWITCHBOARD_SERVER_DOWN_AFTER is one
// server.down, and one server.up when it answers again; a blip shorter
// than that is no server.down. Tenant webhooks get none of it.
func TestSystemEventsNodeConnectionAndServer(t *testing.T) {
	if racecheck.Enabled {
		// The fake drops connections the pool may be authenticating; eslgo
		// v1.5.2's own close then races its unlocked auth goroutine.
		// `make test` runs this test again without -race.
		t.Skip("skipped under -race: eslgo closing a connection mid-authentication races inside eslgo")
	}
	env := map[string]string{"SWITCHBOARD_SERVER_DOWN_AFTER": "2s"}
	for k, v := range hookEnv {
		env[k] = v
	}
	for _, be := range apptest.Envs(t) {
		t.Run(be.Name, func(t *testing.T) {
			s, fs := startWithFake(t, be, env)
			node := fs.Addr()
			w := watchSystem(t, s, s.Tenant(t, "nodeev"), "esl.connected", "esl.disconnected", "server.down", "server.up")
			ofNode := fieldIs("node", node)
			counted := func(typ string, want int) func([]received) bool {
				return func([]received) bool { return w.count(t, typ, ofNode) >= want }
			}
			// The first connection counts as connected (it happened before
			// the webhook existed: the event waits in the outbox for none,
			// so connect again to see one delivered).
			waitEvents(t, fs, 1)
			fs.DropConnections()
			w.sys.waitFor(t, "esl.disconnected then esl.connected after a blip", func(g []received) bool {
				return counted("esl.disconnected", 1)(g) && counted("esl.connected", 1)(g)
			})
			ev := w.expect(t, "esl.disconnected", ofNode)
			if ev.Data["at"] == nil || ev.Data["error"] == nil {
				t.Fatalf("esl.disconnected data %v", ev.Data)
			}

			// Down for good: one esl.disconnected, however many failed
			// reconnects, then one server.down after the grace period.
			fs.Close()
			w.sys.waitFor(t, "server.down", counted("server.down", 1))
			if n := w.count(t, "esl.disconnected", ofNode); n != 2 {
				t.Fatalf("esl.disconnected %d times, want 2 (the blip and the outage)", n)
			}
			down := w.expect(t, "server.down", ofNode)
			if down.Data["grace_seconds"] != float64(2) || down.Data["unreachable_since"] == nil {
				t.Fatalf("server.down data %v", down.Data)
			}
			time.Sleep(3 * time.Second) // more reconnect attempts fail
			if n, m := w.count(t, "esl.disconnected", ofNode), w.count(t, "server.down", ofNode); n != 2 || m != 1 {
				t.Fatalf("failed reconnects reported again: esl.disconnected %d, server.down %d", n, m)
			}

			if err := fs.Restart(); err != nil {
				t.Fatal(err)
			}
			w.sys.waitFor(t, "server.up and esl.connected", func(g []received) bool {
				return counted("server.up", 1)(g) && counted("esl.connected", 2)(g)
			})
			time.Sleep(500 * time.Millisecond)
			got := map[string]int{}
			for _, typ := range []string{"esl.connected", "esl.disconnected", "server.down", "server.up"} {
				got[typ] = w.count(t, typ, ofNode)
			}
			if got["esl.connected"] != 2 || got["esl.disconnected"] != 2 || got["server.down"] != 1 || got["server.up"] != 1 {
				t.Fatalf("events of the node: %v", got)
			}
			w.noneToTenants(t)
		})
	}
}

// startWithFake starts a server on backend be wired to a new fake node,
// with env and the webhook test settings.
func startWithFake(t *testing.T, be apptest.Env, env map[string]string) (*apptest.Server, *fakefs.Server) {
	t.Helper()
	fs := startFake(t)
	run := map[string]string{"SWITCHBOARD_ESL_NODES": fs.Addr()}
	for _, m := range []map[string]string{hookEnv, env} {
		for k, v := range m {
			run[k] = v
		}
	}
	return apptest.Start(t, be, run), fs
}

// TestSystemEventsTrunkRegistration: mod_sofia's gateway state events of a
// trunk (the real headers: Gateway, State, Ping-Status, Status, Phrase)
// become one trunk.registration_failed when its registration starts
// failing, however many retries fail, and one
// trunk.registration_recovered when it registers again; a gateway that is
// no trunk, and the steps in between, report nothing.
func TestSystemEventsTrunkRegistration(t *testing.T) {
	for _, be := range apptest.Envs(t) {
		t.Run(be.Name, func(t *testing.T) {
			s, fs := startWithFake(t, be, nil)
			ten := s.Tenant(t, "trunkev")
			w := watchSystem(t, s, ten, "trunk.registration_failed", "trunk.registration_recovered")
			name := strings.ReplaceAll(storetest.Name("carrier"), "-", "_")
			trunk := s.Do(t, "POST", "/api/sip_trunks/", s.Key, map[string]any{"name": name, "host": "sip.example.net", "register": true, "tenants": []string{ten}}).Expect(t, 201).Map(t)
			waitEvents(t, fs, 1)
			gateway := func(gw, state string, extra ...fakefs.Header) {
				h := append([]fakefs.Header{{Name: "Event-Subclass", Value: "sofia::gateway_state"}, {Name: "Gateway", Value: gw},
					{Name: "State", Value: state}, {Name: "Ping-Status", Value: "UP"}}, extra...)
				fs.EmitEvent("CUSTOM", h, "")
			}
			gateway(name, "TRYING")
			gateway(name, "REGED") // first registration: nothing to recover from
			gateway("not_a_trunk", "FAIL_WAIT", fakefs.Header{Name: "Status", Value: "403"})
			for range 3 {
				gateway(name, "TRYING")
				gateway(name, "FAILED", fakefs.Header{Name: "Status", Value: "403"}, fakefs.Header{Name: "Phrase", Value: "Forbidden"})
				gateway(name, "FAIL_WAIT")
			}
			ev := w.expect(t, "trunk.registration_failed", fieldIs("trunk", name))
			if ev.Data["trunk_id"] != trunk["id"] || ev.Data["state"] != "FAILED" || ev.Data["sip_status"] != float64(403) ||
				ev.Data["sip_phrase"] != "Forbidden" || ev.Data["node"] != fs.Addr() || fmt.Sprint(ev.Data["tenants"]) != "["+ten+"]" {
				t.Fatalf("trunk.registration_failed data %v", ev.Data)
			}
			gateway(name, "REGISTER")
			gateway(name, "REGED")
			gateway(name, "REGED")
			w.expect(t, "trunk.registration_recovered", fieldIs("trunk", name))
			time.Sleep(500 * time.Millisecond)
			if f, r := w.count(t, "trunk.registration_failed", fieldIs("trunk", name)), w.count(t, "trunk.registration_recovered", fieldIs("trunk", name)); f != 1 || r != 1 {
				t.Fatalf("registration_failed %d, registration_recovered %d; want 1 each", f, r)
			}
			if n := w.count(t, "trunk.registration_failed", fieldIs("trunk", "not_a_trunk")); n != 0 {
				t.Fatalf("a gateway that is no trunk was reported %d times", n)
			}
			w.noneToTenants(t)
		})
	}
}

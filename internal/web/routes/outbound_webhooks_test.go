package routes_test

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/comms/messaging/providertest"
	"github.com/switchboard/switchboard/internal/comms/webhooks"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// hookEnv lets deliveries reach the test's loopback receivers over plain
// http and retries quickly; the SSRF test runs without it.
var hookEnv = map[string]string{
	"SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE": "true",
	"SWITCHBOARD_WEBHOOK_ALLOW_HTTP":    "true",
	"SWITCHBOARD_WEBHOOK_RETRY_MIN":     "100ms",
}

// received is one request a receiver got.
type received struct {
	ID, Timestamp, Signature, Event, ContentType string
	Body                                         []byte
	Status                                       int
}

// receiver is a local webhook endpoint answering with the statuses it is
// given in turn (then the last one for ever).
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	got      []received
	statuses []int
	base     int // statuses[0] answers request number base
	// failFirst answers 500 to the first request of every event id.
	failFirst bool
	// hang, when set, makes a request wait until its client gives up.
	hang func(n int) bool
}

func newReceiver(t *testing.T, statuses ...int) *receiver {
	r := &receiver{statuses: statuses}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		n := len(r.got)
		status := 200
		if len(r.statuses) > 0 {
			status = r.statuses[min(n-r.base, len(r.statuses)-1)]
		}
		if r.failFirst {
			status = 500
			for _, g := range r.got {
				if g.ID == req.Header.Get(webhooks.HeaderID) {
					status = 200
				}
			}
		}
		hang := r.hang != nil && r.hang(n)
		if hang {
			status = 0
		}
		r.got = append(r.got, received{ID: req.Header.Get(webhooks.HeaderID), Timestamp: req.Header.Get(webhooks.HeaderTimestamp),
			Signature: req.Header.Get(webhooks.HeaderSignature), Event: req.Header.Get(webhooks.HeaderEvent),
			ContentType: req.Header.Get("Content-Type"), Body: body, Status: status})
		r.mu.Unlock()
		if hang {
			<-req.Context().Done()
			return
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, "answer %d", status)
	}))
	t.Cleanup(r.Close)
	return r
}

// setStatuses sets the answers from the next request on.
func (r *receiver) setStatuses(s ...int) {
	r.mu.Lock()
	r.statuses, r.base = s, len(r.got)
	r.mu.Unlock()
}

func (r *receiver) requests() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}

// waitFor polls the receiver until cond holds for its requests.
func (r *receiver) waitFor(t *testing.T, what string, cond func([]received) bool) []received {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if got := r.requests(); cond(got) {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
	var seen []string
	for _, g := range r.requests() {
		seen = append(seen, fmt.Sprintf("%s %d %s", g.ID, g.Status, g.Body))
	}
	t.Fatalf("receiver: timed out waiting for %s; got:\n%s", what, strings.Join(seen, "\n"))
	return nil
}

// eventBody is a delivery body as receivers see it.
type eventBody struct {
	ID        string         `json:"id"`
	Type      string         `json:"type"`
	Tenant    string         `json:"tenant"`
	CreatedAt string         `json:"created_at"`
	Data      map[string]any `json:"data"`
}

func decodeEvent(t *testing.T, b []byte) eventBody {
	t.Helper()
	var e eventBody
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("delivery body %s: %v", b, err)
	}
	return e
}

// about keeps the requests whose event is a create of resource key.
func about(got []received, resource, name string) []received {
	var out []received
	for _, g := range got {
		var e eventBody
		if json.Unmarshal(g.Body, &e) != nil {
			continue
		}
		if after, _ := e.Data["after"].(map[string]any); e.Data["resource"] == resource && after["name"] == name {
			out = append(out, g)
		}
	}
	return out
}

// allAnswered reports whether the create event of each named department
// was answered 200.
func allAnswered(got []received, names ...string) bool {
	for _, n := range names {
		ok := false
		for _, r := range about(got, "departments", n) {
			ok = ok || r.Status == 200
		}
		if !ok {
			return false
		}
	}
	return true
}

// checkSigned verifies a request's signature with secret, as a receiver would.
func checkSigned(t *testing.T, g received, secret string) {
	t.Helper()
	ts, err := strconv.ParseInt(g.Timestamp, 10, 64)
	if err != nil || time.Since(time.Unix(ts, 0)).Abs() > time.Minute {
		t.Fatalf("timestamp header %q", g.Timestamp)
	}
	if !webhooks.Verify(secret, ts, g.Body, g.Signature) {
		t.Fatalf("signature %q does not verify over %q", g.Signature, g.Body)
	}
	if webhooks.Verify(secret+"x", ts, g.Body, g.Signature) || webhooks.Verify(secret, ts+1, g.Body, g.Signature) {
		t.Fatal("signature verifies with the wrong secret or timestamp")
	}
}

func createHook(t *testing.T, s *apptest.Server, path string, fields map[string]any) (id int64, secret string) {
	t.Helper()
	m := s.Do(t, "POST", path, s.Key, fields).Expect(t, 201).Map(t)
	secret, _ = m["secret"].(string)
	if len(secret) < 16 {
		t.Fatalf("create answer shows no generated secret: %v", m)
	}
	got := s.Do(t, "GET", fmt.Sprintf("%s%v", path, m["id"]), s.Key, nil).Expect(t, 200).Map(t)
	if _, shown := got["secret"]; shown {
		t.Fatal("GET shows the webhook secret")
	}
	return int64(m["id"].(float64)), secret
}

func TestOutboundWebhookSignedRetriedReplayed(t *testing.T) {
	apptest.EachSerial(t, hookEnv, func(t *testing.T, s *apptest.Server) {
		recv := newReceiver(t)
		recv.failFirst = true
		ten := s.Tenant(t, "wh")
		base := "/api/tenants/" + ten + "/outbound_webhooks/"
		id, secret := createHook(t, s, base, map[string]any{"name": "crm", "url": recv.URL + "/hook", "events": []string{"config.changed"}})

		s.Do(t, "POST", "/api/tenants/"+ten+"/departments/", s.Key, map[string]any{"name": "sales"}).Expect(t, 201)
		got := recv.waitFor(t, "the department event twice", func(g []received) bool { return len(about(g, "departments", "sales")) >= 2 })
		dep := about(got, "departments", "sales")
		if dep[0].Status != 500 || dep[1].Status != 200 {
			t.Fatalf("answers %d then %d, want 500 then 200", dep[0].Status, dep[1].Status)
		}
		for _, g := range dep {
			checkSigned(t, g, secret)
			if g.ContentType != "application/json" || g.Event != "config.changed" {
				t.Errorf("headers: content type %q event %q", g.ContentType, g.Event)
			}
		}
		if dep[0].ID == "" || dep[0].ID != dep[1].ID {
			t.Fatalf("X-Webhook-Id %q then %q: must be the same on a retry", dep[0].ID, dep[1].ID)
		}
		ev := decodeEvent(t, dep[1].Body)
		if ev.ID != dep[1].ID || ev.Type != "config.changed" || ev.Tenant != ten || ev.Data["op"] != "create" || ev.CreatedAt == "" {
			t.Fatalf("event body %s", dep[1].Body)
		}

		// The delivery log shows the two attempts' outcome.
		var log []map[string]any
		var mine map[string]any
		deadline := time.Now().Add(10 * time.Second)
		for mine == nil || mine["status"] != "succeeded" {
			if time.Now().After(deadline) {
				t.Fatalf("delivery log never showed success: %v", log)
			}
			r := s.Do(t, "GET", fmt.Sprintf("%s%d/deliveries", base, id), s.Key, nil).Expect(t, 200)
			r.JSON(t, &log)
			for _, d := range log {
				if d["event_id"] == dep[0].ID {
					mine = d
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		if mine["attempts"].(float64) != 2 || mine["response_status"].(float64) != 200 || mine["event_type"] != "config.changed" {
			t.Fatalf("delivery log entry %v", mine)
		}
		// Each attempt in the history: the 500 with its error and answer,
		// then the 200.
		hist, _ := mine["attempt_history"].([]any)
		if len(hist) != 2 {
			t.Fatalf("attempt history %v, want two attempts", mine["attempt_history"])
		}
		first, second := hist[0].(map[string]any), hist[1].(map[string]any)
		if first["attempt"].(float64) != 1 || first["response_status"].(float64) != 500 || first["error"] != "HTTP 500" || first["at"] == "" ||
			second["attempt"].(float64) != 2 || second["response_status"].(float64) != 200 || second["error"] != "" || second["at"].(string) < first["at"].(string) {
			t.Fatalf("attempt history %v", hist)
		}
		if _, ok := first["latency_ms"].(float64); !ok {
			t.Fatalf("attempt without latency: %v", first)
		}

		// A replay sends the same event again.
		s.Do(t, "POST", fmt.Sprintf("%s%d/deliveries/%v/replay", base, id, mine["id"]), s.Key, map[string]any{}).Expect(t, 202)
		got = recv.waitFor(t, "the replay", func(g []received) bool { return len(about(g, "departments", "sales")) >= 3 })
		if r := about(got, "departments", "sales")[2]; r.ID != dep[0].ID || string(r.Body) != string(dep[0].Body) {
			t.Fatalf("replay sent %s %s", r.ID, r.Body)
		}
		s.Do(t, "POST", fmt.Sprintf("%s%d/deliveries/999999999/replay", base, id), s.Key, map[string]any{}).Expect(t, 404)

		// A test send answers its attempt.
		recv.mu.Lock()
		recv.failFirst = false
		recv.mu.Unlock()
		tr := s.Do(t, "POST", fmt.Sprintf("%s%d/test", base, id), s.Key, map[string]any{}).Expect(t, 200).Map(t)
		if tr["status"] != "succeeded" || tr["event_type"] != "webhook.test" || tr["response_status"].(float64) != 200 {
			t.Fatalf("test send %v", tr)
		}
		last := recv.requests()[len(recv.requests())-1]
		checkSigned(t, last, secret)

		// Another tenant sees none of it.
		other := s.Tenant(t, "wh")
		s.Do(t, "GET", fmt.Sprintf("/api/tenants/%s/outbound_webhooks/%d/deliveries", other, id), s.Key, nil).Expect(t, 404)
		tkey := s.KeyFor(t, map[string]any{"name": "other", "tenant": other})
		s.Do(t, "GET", fmt.Sprintf("%s%d/deliveries", base, id), tkey, nil).Expect(t, 403)
	})
}

func TestOutboundWebhookAutoDisabledAndReenabled(t *testing.T) {
	env := map[string]string{"SWITCHBOARD_WEBHOOK_DISABLE_AFTER": "3"}
	for k, v := range hookEnv {
		env[k] = v
	}
	apptest.EachSerial(t, env, func(t *testing.T, s *apptest.Server) {
		recv := newReceiver(t, 503)
		sys := newReceiver(t, 200)
		ten := s.Tenant(t, "wd")
		base := "/api/tenants/" + ten + "/outbound_webhooks/"
		sysID, sysSecret := createHook(t, s, "/api/system_webhooks/", map[string]any{"name": storetest.Name("ops"), "url": sys.URL, "events": []string{"webhook.auto_disabled"}})
		id, _ := createHook(t, s, base, map[string]any{"name": "flaky", "url": recv.URL, "events": []string{"config.changed"}})
		for _, n := range []string{"d1", "d2", "d3"} {
			s.Do(t, "POST", "/api/tenants/"+ten+"/departments/", s.Key, map[string]any{"name": n}).Expect(t, 201)
		}
		var hook map[string]any
		deadline := time.Now().Add(20 * time.Second)
		for {
			hook = s.Do(t, "GET", fmt.Sprintf("%s%d", base, id), s.Key, nil).Expect(t, 200).Map(t)
			if hook["enabled"] == false {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("never auto-disabled: %v", hook)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if r, _ := hook["disabled_reason"].(string); !strings.Contains(r, "3 consecutive failed attempts") || !strings.Contains(r, "HTTP 503") {
			t.Fatalf("disabled_reason %q", hook["disabled_reason"])
		}
		if hook["consecutive_failures"].(float64) < 3 || hook["last_failure_at"] == nil {
			t.Fatalf("counters %v", hook)
		}
		// Operators hear of it through system webhooks.
		got := sys.waitFor(t, "webhook.auto_disabled", func(g []received) bool { return len(g) >= 1 })
		checkSigned(t, got[0], sysSecret)
		if ev := decodeEvent(t, got[0].Body); ev.Type != "webhook.auto_disabled" || ev.Data["webhook_id"].(float64) != float64(id) || ev.Data["tenant"] != ten {
			t.Fatalf("system event %s", got[0].Body)
		}
		_ = sysID

		// Nothing is sent while disabled: deliveries are held.
		before := len(recv.requests())
		s.Do(t, "POST", "/api/tenants/"+ten+"/departments/", s.Key, map[string]any{"name": "while_off"}).Expect(t, 201)
		time.Sleep(500 * time.Millisecond)
		if n := len(recv.requests()); n != before {
			t.Fatalf("a disabled webhook got %d more requests", n-before)
		}

		recv.setStatuses(200)
		on := s.Do(t, "POST", fmt.Sprintf("%s%d/enable", base, id), s.Key, map[string]any{}).Expect(t, 200).Map(t)
		if on["enabled"] != true || on["disabled_reason"] != nil || on["consecutive_failures"].(float64) != 0 {
			t.Fatalf("enable answered %v", on)
		}
		// Every event, from before and while it was disabled, arrives.
		recv.waitFor(t, "the held deliveries", func(g []received) bool { return allAnswered(g, "d1", "d2", "d3", "while_off") })
		s.Do(t, "POST", "/api/tenants/"+ten+"/departments/", s.Key, map[string]any{"name": "after_on"}).Expect(t, 201)
		recv.waitFor(t, "a new event after enable", func(g []received) bool { return len(about(g, "departments", "after_on")) == 1 })
		// A webhook a client disables itself collects nothing.
		s.Do(t, "PUT", fmt.Sprintf("%s%d", base, id), s.Key, map[string]any{"enabled": false}).Expect(t, 200)
		s.Do(t, "POST", "/api/tenants/"+ten+"/departments/", s.Key, map[string]any{"name": "user_off"}).Expect(t, 201)
		s.Do(t, "PUT", fmt.Sprintf("%s%d", base, id), s.Key, map[string]any{"enabled": true}).Expect(t, 200)
		s.Do(t, "POST", "/api/tenants/"+ten+"/departments/", s.Key, map[string]any{"name": "user_on"}).Expect(t, 201)
		recv.waitFor(t, "the event after a client enabled it", func(g []received) bool { return len(about(g, "departments", "user_on")) == 1 })
		if n := len(about(recv.requests(), "departments", "user_off")); n != 0 {
			t.Fatalf("an event from while the client had disabled the webhook was sent %d times", n)
		}
	})
}

func TestOutboundWebhookNothingLostAcrossRestart(t *testing.T) {
	for _, e := range apptest.Envs(t) {
		t.Run(e.Name, func(t *testing.T) {
			group := storetest.Name("restart")
			recv := newReceiver(t, 200)
			recv.hang = func(n int) bool { return n == 0 } // the first request never answers
			var ten string
			var id int64
			names := []string{"r1", "r2", "r3", "r4", "r5"}
			t.Run("first instance", func(t *testing.T) {
				s := apptest.StartReplica(t, e, hookEnv, group)
				ten = s.Tenant(t, "rs")
				id, _ = createHook(t, s, "/api/tenants/"+ten+"/outbound_webhooks/", map[string]any{"name": "r", "url": recv.URL, "events": []string{"config.changed"}, "timeout_ms": 30000})
				for _, n := range names {
					s.Do(t, "POST", "/api/tenants/"+ten+"/departments/", s.Key, map[string]any{"name": n}).Expect(t, 201)
				}
				recv.waitFor(t, "the first request", func(g []received) bool { return len(g) >= 1 })
				// The instance stops here, with that request in flight.
			})
			hung := recv.requests()[0]
			s := apptest.StartReplica(t, e, hookEnv, group)
			got := recv.waitFor(t, "every event answered 200", func(g []received) bool {
				redone := false
				for _, r := range g[1:] {
					redone = redone || (r.ID == hung.ID && r.Status == 200)
				}
				return redone && allAnswered(g, names...)
			})
			// The receiver de-duplicates on X-Webhook-Id: every event
			// once, whatever the restart repeated.
			ids := map[string]bool{}
			for _, g := range got {
				if g.Status == 200 {
					ids[g.ID] = true
				}
			}
			if len(ids) != len(names)+1 {
				t.Fatalf("distinct events delivered: %d, want %d", len(ids), len(names)+1)
			}
			s.Do(t, "GET", fmt.Sprintf("/api/tenants/%s/outbound_webhooks/%d/deliveries", ten, id), s.Key, nil).Expect(t, 200)
		})
	}
}

func TestOutboundWebhookSSRFGuard(t *testing.T) {
	apptest.EachSerial(t, map[string]string{"SWITCHBOARD_WEBHOOK_ALLOW_HTTP": "true"}, func(t *testing.T, s *apptest.Server) {
		recv := newReceiver(t, 200)
		ten := s.Tenant(t, "ss")
		base := "/api/tenants/" + ten + "/outbound_webhooks/"
		for i, c := range []struct{ url, want string }{
			{recv.URL, "127.0.0.1 is a loopback address"},
			{"http://localhost:9/x", "is a loopback address"},
			{"http://10.1.2.3/x", "10.1.2.3 is a private address"},
			{"http://192.168.0.10/x", "is a private address"},
			{"http://169.254.169.254/latest/meta-data", "169.254.169.254 is a link-local address"},
			{"http://0.0.0.0/x", "is a unspecified address"},
		} {
			id, _ := createHook(t, s, base, map[string]any{"name": fmt.Sprintf("h%d", i), "url": c.url, "events": []string{"config.changed"}})
			d := s.Do(t, "POST", fmt.Sprintf("%s%d/test", base, id), s.Key, map[string]any{}).Expect(t, 200).Map(t)
			if e, _ := d["error"].(string); d["status"] != "dead" || !strings.Contains(e, c.want) || !strings.Contains(e, "refused target") {
				t.Errorf("%s: test send %v, want refusal %q", c.url, d, c.want)
			}
		}
		if n := len(recv.requests()); n != 0 {
			t.Fatalf("the loopback receiver was reached %d times", n)
		}
	})
	apptest.EachSerial(t, nil, func(t *testing.T, s *apptest.Server) {
		ten := s.Tenant(t, "ss")
		base := "/api/tenants/" + ten + "/outbound_webhooks/"
		id, _ := createHook(t, s, base, map[string]any{"name": "plain", "url": "http://example.com/hook", "events": []string{"config.changed"}})
		d := s.Do(t, "POST", fmt.Sprintf("%s%d/test", base, id), s.Key, map[string]any{}).Expect(t, 200).Map(t)
		if e, _ := d["error"].(string); !strings.Contains(e, "scheme http is not allowed") {
			t.Errorf("plain http test send %v", d)
		}
	})
}

func TestOutboundWebhookTimeoutAndResponseCap(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			w.WriteHeader(200)
			_, _ = w.Write([]byte(strings.Repeat("x", 4<<20)))
			return
		}
		select {
		case <-time.After(3 * time.Second):
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	apptest.EachSerial(t, hookEnv, func(t *testing.T, s *apptest.Server) {
		ten := s.Tenant(t, "to")
		base := "/api/tenants/" + ten + "/outbound_webhooks/"
		id, _ := createHook(t, s, base, map[string]any{"name": "slow", "url": slow.URL + "/slow", "events": []string{"config.changed"}, "timeout_ms": 1000})
		start := time.Now()
		d := s.Do(t, "POST", fmt.Sprintf("%s%d/test", base, id), s.Key, map[string]any{}).Expect(t, 200).Map(t)
		if e, _ := d["error"].(string); d["status"] != "dead" || e != "timed out after 1s" || time.Since(start) > 2500*time.Millisecond {
			t.Fatalf("slow receiver: %v after %s", d, time.Since(start))
		}
		id, _ = createHook(t, s, base, map[string]any{"name": "big", "url": slow.URL + "/big", "events": []string{"config.changed"}})
		d = s.Do(t, "POST", fmt.Sprintf("%s%d/test", base, id), s.Key, map[string]any{}).Expect(t, 200).Map(t)
		if b, _ := d["response_body"].(string); d["status"] != "succeeded" || len(b) != 1024 {
			t.Fatalf("big answer: status %v, %d bytes kept", d["status"], len(b))
		}
	})
}

// twilioWithHooks starts a Twilio fake and returns it with the environment
// of a server that sends through it and delivers webhooks quickly.
func twilioWithHooks(t *testing.T) (*providertest.Twilio, map[string]string) {
	t.Helper()
	tw := providertest.NewTwilio(twSid, twToken)
	t.Cleanup(tw.Close)
	env := map[string]string{"SWITCHBOARD_TWILIO_URL": tw.URL}
	maps.Copy(env, hookEnv)
	return tw, env
}

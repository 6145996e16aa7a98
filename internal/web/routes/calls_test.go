package routes_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/platform/racecheck"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

func TestPlaceCallSendsCallbackOriginate(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		r := e.Do(t, "POST", "/api/telephony/call", e.user, map[string]any{"from": testMobile, "to": "+442071234567"}).Expect(t, 202).Map(t)
		uuid, _ := r["uuid"].(string)
		if r["status"] != "dialing" || r["tenant"] != e.tenant || r["from"] != testMobile || r["to"] != "+442071234567" || uuid == "" {
			t.Fatalf("answer %v", r)
		}
		// The calling user's directory variables, then the callback's own.
		// The ^^; separator keeps toll_allow's commas: the originate API
		// strips single quotes before the {} block is split at commas.
		want := "bgapi originate {^^;origination_uuid=" + uuid + ";user_context=" + e.tenant + ";sb_tenant=" + e.tenant + ";sb_ext=1001;" +
			"effective_caller_id_name=1001;effective_caller_id_number=1001;outbound_caller_id_number=+27110000000;" +
			"toll_allow=internal,local,national;call_timeout=30;default_language=en;timezone=UTC;sb_call=" + uuid + ";sb_callback=true;" +
			"origination_caller_id_name=1001;origination_caller_id_number=1001;" +
			"ignore_early_media=true;originate_timeout=30;hangup_after_bridge=true}" +
			"loopback/" + testMobile + "/" + e.tenant + " +442071234567 XML " + e.tenant
		if got := waitCommand(t, e.fs, "bgapi originate"); got != want {
			t.Fatalf("originate line\n got %s\nwant %s", got, want)
		}
		// The answer's channel id is the one the A leg's events carry.
		id := e.waitChannel(t, uuid)
		if id != r["channel"] || !strings.HasPrefix(id, "Local/1001-"+e.tenant+"-") {
			t.Fatalf("listed id %q, answered %q", id, r["channel"])
		}
		for _, path := range []string{"/api/telephony/channels/" + esc(id), "/api/telephony/channels/" + id} {
			ch := e.Do(t, "GET", path, e.user, nil).Expect(t, 200).Map(t)
			if ch["id"] != id || ch["uuid"] != uuid {
				t.Errorf("GET %s: %v", path, ch)
			}
		}
	})
}

func TestPlaceCallRefusals(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		readOnly := e.KeyFor(t, map[string]any{"tenant": e.tenant, "extension": "1001", "permissions": []string{"calls.read"}})
		other := e.Tenant(t, "othr")
		cases := []struct {
			name   string
			key    string
			body   any
			status int
			code   string
		}{
			{"missing from", e.user, map[string]any{"to": "1002"}, 400, "validation_failed"},
			{"from not E.164", e.user, map[string]any{"from": "0825550001", "to": "1002"}, 400, "validation_failed"},
			{"to not dialable", e.user, map[string]any{"from": testMobile, "to": "1002;drop"}, 400, "validation_failed"},
			{"unknown field", e.user, map[string]any{"from": testMobile, "to": "1002", "cid": "x"}, 400, "bad_request"},
			{"wrong mobile", e.user, map[string]any{"from": "+27825559999", "to": "1002"}, 403, "from_not_mobile"},
			{"extension without mobile", e.tenantKey, map[string]any{"from": testMobile, "to": "1001", "extension": "1002"}, 403, "from_not_mobile"},
			{"tenant key without extension", e.tenantKey, map[string]any{"from": testMobile, "to": "1002"}, 400, "validation_failed"},
			{"platform key without tenant", e.Key, map[string]any{"from": testMobile, "to": "1002", "extension": "1001"}, 400, "validation_failed"},
			{"tenant key naming another tenant", e.tenantKey, map[string]any{"from": testMobile, "to": "1002", "extension": "1001", "tenant": other}, 403, "forbidden"},
			{"user key acting as another extension", e.user, map[string]any{"from": testMobile, "to": "1002", "extension": "1002"}, 403, "forbidden"},
			{"unknown extension", e.tenantKey, map[string]any{"from": testMobile, "to": "1002", "extension": "1999"}, 404, "not_found"},
			{"no calls.control", readOnly, map[string]any{"from": testMobile, "to": "1002"}, 403, "forbidden"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := e.Do(t, "POST", "/api/telephony/call", tc.key, tc.body).Expect(t, tc.status)
				if r.Code(t) != tc.code {
					t.Errorf("code %q, want %q (%s)", r.Code(t), tc.code, r.Body)
				}
			})
		}
		// Basic auth is refused on action endpoints.
		r := e.DoHeaders(t, "POST", "/api/telephony/call", map[string]string{"Authorization": "Basic YWRtaW46YWRtaW4="}, map[string]any{"from": testMobile, "to": "1002"})
		r.Expect(t, 401)
		// A platform key naming tenant and extension may call.
		e.Do(t, "POST", "/api/telephony/call", e.Key, map[string]any{"from": testMobile, "to": "1002", "extension": "1001", "tenant": e.tenant}).Expect(t, 202)
		for _, c := range e.fs.Commands() {
			if strings.HasPrefix(c, "bgapi originate") && !strings.Contains(c, "loopback/"+testMobile+"/"+e.tenant+" 1002 XML") {
				t.Errorf("unexpected originate %s", c)
			}
		}
		if n := countPrefix(e.fs.Commands(), "bgapi originate"); n != 1 {
			t.Errorf("%d originates, want only the platform key's", n)
		}
	})
}

func countPrefix(cmds []string, prefix string) int {
	n := 0
	for _, c := range cmds {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

func TestChannelActions(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		id, uuid := e.liveChannel(t, e.tenant, "1001")

		r := e.Do(t, "POST", "/api/telephony/transfer", e.user, map[string]any{"channel": id, "to": "1002"}).Expect(t, 200).Map(t)
		if r["status"] != "transferred" || r["channel"] != id {
			t.Errorf("transfer answer %v", r)
		}
		if got, want := waitCommand(t, e.fs, "api uuid_transfer"), "api uuid_transfer "+uuid+" 1002 XML "+e.tenant; got != want {
			t.Errorf("got %q, want %q", got, want)
		}

		r = e.Do(t, "POST", "/api/telephony/record", e.user, map[string]any{"channel": id, "filename": "meeting-1"}).Expect(t, 200).Map(t)
		wantPath := "/rec/" + e.tenant + "/meeting-1.wav"
		if r["status"] != "recording_started" || r["path"] != wantPath {
			t.Errorf("record answer %v", r)
		}
		if got, want := waitCommand(t, e.fs, "api uuid_record"), "api uuid_record "+uuid+" start "+wantPath; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
		e.Do(t, "POST", "/api/telephony/record", e.user, map[string]any{"channel": id, "action": "stop", "filename": "meeting-1.wav"}).Expect(t, 200)
		if got, want := waitCommand(t, e.fs, "api uuid_record"), "api uuid_record "+uuid+" stop "+wantPath; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
		// "all" names a file in the tenant's directory when starting (not
		// a path relative to FreeSWITCH's working directory); only a stop
		// passes it on as "every recording of this channel".
		r = e.Do(t, "POST", "/api/telephony/record", e.user, map[string]any{"channel": id, "action": "start", "filename": "all"}).Expect(t, 200).Map(t)
		if want := "/rec/" + e.tenant + "/all.wav"; r["path"] != want {
			t.Errorf("record all answer %v, want path %s", r, want)
		}
		if got, want := waitCommand(t, e.fs, "api uuid_record"), "api uuid_record "+uuid+" start /rec/"+e.tenant+"/all.wav"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
		e.Do(t, "POST", "/api/telephony/record", e.user, map[string]any{"channel": id, "action": "stop", "filename": "all"}).Expect(t, 200)
		if got, want := waitCommand(t, e.fs, "api uuid_record"), "api uuid_record "+uuid+" stop all"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
		for _, bad := range []string{"../etc/passwd", "a/b", "x..wav", "a b", strings.Repeat("a", 101)} {
			if r := e.Do(t, "POST", "/api/telephony/record", e.user, map[string]any{"channel": id, "filename": bad}).Expect(t, 400); r.Code(t) != "validation_failed" {
				t.Errorf("filename %q: code %q", bad, r.Code(t))
			}
		}
		e.Do(t, "POST", "/api/telephony/record", e.user, map[string]any{"channel": id, "action": "pause"}).Expect(t, 400)
		e.Do(t, "POST", "/api/telephony/transfer", e.user, map[string]any{"channel": id, "to": "10 02"}).Expect(t, 400)

		// FreeSWITCH refusing is a 502 carrying its text.
		e.fs.SetAPIReply("uuid_transfer", "-ERR No such channel!\n")
		r2 := e.Do(t, "POST", "/api/telephony/transfer", e.user, map[string]any{"channel": id, "to": "1003"}).Expect(t, 502)
		if r2.Code(t) != "freeswitch_error" || !strings.Contains(string(r2.Body), "No such channel!") {
			t.Errorf("502 body %s", r2.Body)
		}
		e.fs.ClearAPIReplies()

		r = e.Do(t, "POST", "/api/telephony/hangup", e.user, map[string]any{"channel": id}).Expect(t, 200).Map(t)
		if r["status"] != "hangup_requested" || r["channel"] != id {
			t.Errorf("hangup answer %v", r)
		}
		if got, want := waitCommand(t, e.fs, "api uuid_kill"), "api uuid_kill "+uuid; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
		// Once ended the channel is 404 for actions.
		wait.Until(t, 5*time.Second, "channel ended", func() bool {
			return e.Do(t, "POST", "/api/telephony/hangup", e.user, map[string]any{"channel": id}).Status == 404
		})
		if r := e.Do(t, "POST", "/api/telephony/hangup", e.user, map[string]any{"channel": id}); r.Code(t) != "channel_ended" {
			t.Errorf("ended channel code %q", r.Code(t))
		}
	})
}

func TestChannelActionErrors(t *testing.T) {
	if racecheck.Enabled {
		// The fake drops connections the pool may be authenticating; eslgo
		// v1.5.2's own close then races its unlocked auth goroutine.
		// `make test` runs this test again without -race.
		t.Skip("skipped under -race: eslgo closing a connection mid-authentication races inside eslgo")
	}
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		other := e.Tenant(t, "othr")
		otherKey := e.KeyFor(t, map[string]any{"tenant": other})
		id, _ := e.liveChannel(t, e.tenant, "1001")
		unknown := "SIP/1001-" + e.tenant + "-7fffffff"
		cases := []struct {
			name   string
			path   string
			key    string
			body   map[string]any
			status int
			code   string
		}{
			{"missing channel", "/api/telephony/hangup", e.user, map[string]any{}, 400, "validation_failed"},
			{"malformed channel", "/api/telephony/hangup", e.user, map[string]any{"channel": "nope"}, 400, "validation_failed"},
			{"unknown channel", "/api/telephony/hangup", e.user, map[string]any{"channel": unknown}, 404, "channel_not_found"},
			{"other tenant hangup", "/api/telephony/hangup", otherKey, map[string]any{"channel": id}, 403, "forbidden"},
			{"other tenant transfer", "/api/telephony/transfer", otherKey, map[string]any{"channel": id, "to": "1002"}, 403, "forbidden"},
			{"other tenant record", "/api/telephony/record", otherKey, map[string]any{"channel": id}, 403, "forbidden"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := e.Do(t, "POST", tc.path, tc.key, tc.body).Expect(t, tc.status)
				if r.Code(t) != tc.code {
					t.Errorf("code %q, want %q", r.Code(t), tc.code)
				}
			})
		}
		if n := countPrefix(e.fs.Commands(), "api uuid_"); n != 0 {
			t.Errorf("refused actions reached FreeSWITCH: %v", e.fs.Commands())
		}
		// A node that is down answers 503 at once, for actions and calls.
		e.fs.Close()
		wait.Until(t, 5*time.Second, "node down", func() bool {
			return e.Do(t, "POST", "/api/telephony/hangup", e.user, map[string]any{"channel": id}).Status == 503
		})
		r := e.Do(t, "POST", "/api/telephony/call", e.user, map[string]any{"from": testMobile, "to": "1002"}).Expect(t, 503)
		if r.Code(t) != "freeswitch_unavailable" || r.Header.Get("Retry-After") != "5" {
			t.Errorf("code %q, Retry-After %q", r.Code(t), r.Header.Get("Retry-After"))
		}
		// Reads and configuration still work (channel lists need a tenant
		// credential: a user key sees only its own extension).
		e.Do(t, "GET", "/api/telephony/channels", e.tenantKey, nil).Expect(t, 200)
		e.Do(t, "GET", "/readyz", "", nil).Expect(t, 200)
	})
}

func TestChannelTenantIsolation(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		other := e.Tenant(t, "othr")
		otherKey := e.KeyFor(t, map[string]any{"tenant": other})
		mine, _ := e.liveChannel(t, e.tenant, "1001")
		theirs, _ := e.liveChannel(t, other, "2001")

		var list []map[string]any
		r := e.Do(t, "GET", "/api/telephony/channels", e.tenantKey, nil).Expect(t, 200)
		r.JSON(t, &list)
		if len(list) != 1 || list[0]["id"] != mine || r.Header.Get("X-Total-Count") != "1" {
			t.Fatalf("tenant list %s (total %s)", r.Body, r.Header.Get("X-Total-Count"))
		}
		e.Do(t, "GET", "/api/telephony/channels?tenant="+other, e.tenantKey, nil).Expect(t, 403)
		e.Do(t, "GET", "/api/telephony/channels/"+esc(theirs), e.tenantKey, nil).Expect(t, 403)
		e.Do(t, "GET", "/api/telephony/channels/"+theirs, otherKey, nil).Expect(t, 200)
		e.Do(t, "GET", "/api/telephony/channels/"+esc("SIP/1-"+e.tenant+"-00000abc"), e.tenantKey, nil).Expect(t, 404)

		r = e.Do(t, "GET", "/api/telephony/channels?tenant="+other, e.Key, nil).Expect(t, 200)
		r.JSON(t, &list)
		if len(list) != 1 || list[0]["id"] != theirs {
			t.Errorf("platform filter: %s", r.Body)
		}
		r = e.Do(t, "GET", "/api/telephony/channels?limit=1&offset=0", e.Key, nil).Expect(t, 200)
		r.JSON(t, &list)
		if total, _ := strconv.Atoi(r.Header.Get("X-Total-Count")); len(list) != 1 || total < 2 {
			t.Errorf("paging: %d items, total %s", len(list), r.Header.Get("X-Total-Count"))
		}
	})
}

func TestCDRWrittenAndFiltered(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		before := time.Now().UTC().Add(-time.Minute)
		id, uuid := e.liveChannel(t, e.tenant, "1001")
		if err := e.fs.Hangup(uuid, "NORMAL_CLEARING"); err != nil {
			t.Fatal(err)
		}
		var list []map[string]any
		wait.Until(t, 5*time.Second, "cdr", func() bool {
			e.Do(t, "GET", "/api/reports/cdrs", e.tenantKey, nil).Expect(t, 200).JSON(t, &list)
			return len(list) == 1
		})
		c := list[0]
		if c["channel_id"] != id || c["uuid"] != uuid || c["tenant"] != e.tenant || c["hangup_cause"] != "NORMAL_CLEARING" || c["extension"] != "1001" {
			t.Errorf("cdr %v", c)
		}
		q := func(from, to time.Time) int {
			r := e.Do(t, "GET", fmt.Sprintf("/api/reports/cdrs?from=%s&to=%s", from.Format(time.RFC3339), to.Format(time.RFC3339)), e.tenantKey, nil).Expect(t, 200)
			r.JSON(t, &list)
			return len(list)
		}
		now := time.Now().UTC()
		if n := q(before, now.Add(time.Minute)); n != 1 {
			t.Errorf("window around the call: %d", n)
		}
		if n := q(now.Add(time.Minute), now.Add(time.Hour)); n != 0 {
			t.Errorf("window after the call: %d", n)
		}
		if n := q(before.Add(-time.Hour), before); n != 0 {
			t.Errorf("window before the call: %d", n)
		}
		e.Do(t, "GET", "/api/reports/cdrs?from=yesterday", e.tenantKey, nil).Expect(t, 400)
		other := e.KeyFor(t, map[string]any{"tenant": e.Tenant(t, "othr")})
		e.Do(t, "GET", "/api/reports/cdrs", other, nil).Expect(t, 200).JSON(t, &list)
		if len(list) != 0 {
			t.Errorf("another tenant sees %d cdrs", len(list))
		}
		r := e.Do(t, "GET", "/api/reports/cdrs?tenant="+e.tenant, e.Key, nil).Expect(t, 200)
		if r.Header.Get("X-Total-Count") != "1" {
			t.Errorf("platform filter total %s", r.Header.Get("X-Total-Count"))
		}
	})
}

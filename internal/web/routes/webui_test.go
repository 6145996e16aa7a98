package routes_test

import (
	"strings"
	"testing"
)

// The live-calls dashboard acts with the browser session: its event
// stream resumes with Last-Event-ID for a session as for a key, a tenant
// administrator's session sees and acts on its own tenant only, and the
// call actions take the session with its CSRF token (never without it,
// never HTTP Basic).
func TestDashboardSessionStreamsAndActs(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		other := e.Tenant(t, "other")
		name := createAdmin(t, e.Server, "tenant_admin", []string{e.tenant})
		own := signIn(t, e.Server, name, adminPassword)
		stranger := signIn(t, e.Server, createAdmin(t, e.Server, "tenant_admin", []string{other}), adminPassword)

		// The stream with the session cookie, and its resumption.
		rd, resp := openStream(t, e, "", "Cookie", own.cookie()["Cookie"])
		first := e.createTenantChannel(t, "1001")
		id, event, data := readMessage(t, rd)
		if id == "" || event != "channel.created" || !strings.Contains(data, first) {
			t.Fatalf("session stream: id=%q event=%q data=%s", id, event, data)
		}
		resp.Body.Close()
		missed := e.createTenantChannel(t, "1002")
		e.waitChannel(t, missed)
		rd2, _ := openStream(t, e, "", "Cookie", own.cookie()["Cookie"], "Last-Event-ID", id)
		if id2, event2, data2 := readMessage(t, rd2); id2 == id || event2 != "channel.created" || !strings.Contains(data2, missed) {
			t.Fatalf("session stream resumed after %s: id=%q event=%q data=%s", id, id2, event2, data2)
		}

		// Another tenant's administrator sees none of it.
		streamHeaders := func(w webSession) map[string]string {
			return map[string]string{"Cookie": w.cookie()["Cookie"], "Accept": "text/event-stream"}
		}
		e.DoHeaders(t, "GET", "/api/telephony/channels?tenant="+e.tenant, stranger.cookie(), nil).Expect(t, 403)
		e.DoHeaders(t, "GET", "/api/telephony/events?tenant="+e.tenant, streamHeaders(stranger), nil).Expect(t, 403)
		var list []map[string]any
		e.DoHeaders(t, "GET", "/api/telephony/channels?limit=1000", own.cookie(), nil).Expect(t, 200).JSON(t, &list)
		if len(list) != 2 {
			t.Errorf("the tenant administrator's session lists %d channels, want its tenant's 2", len(list))
		}

		// Actions: refused without the CSRF token, with Basic, and for
		// another tenant's session; done with the session and its token.
		ch := e.waitChannel(t, first)
		body := map[string]any{"channel": ch}
		if r := e.DoHeaders(t, "POST", "/api/telephony/hangup", own.cookie(), body).Expect(t, 403); r.Code(t) != "csrf_failed" {
			t.Errorf("hang-up without the CSRF token: code %s", r.Code(t))
		}
		if r := e.DoHeaders(t, "POST", "/api/telephony/hangup", basicAuth(name, adminPassword), body).Expect(t, 401); r.Code(t) != "api_key_required" {
			t.Errorf("hang-up with Basic: code %s", r.Code(t))
		}
		if r := e.DoHeaders(t, "POST", "/api/telephony/hangup", stranger.headers(), body); r.Status != 403 && r.Status != 404 {
			t.Errorf("hang-up by another tenant's session: %d %s", r.Status, r.Body)
		}
		e.DoHeaders(t, "POST", "/api/telephony/record", own.headers(), map[string]any{"channel": ch, "action": "start"}).Expect(t, 200)
		if got := waitCommand(t, e.fs, "api uuid_record"); !strings.HasPrefix(got, "api uuid_record "+first+" start /rec/"+e.tenant+"/") {
			t.Errorf("record with the session sent %q", got)
		}
		e.DoHeaders(t, "POST", "/api/telephony/transfer", own.headers(), map[string]any{"channel": ch, "to": "1002"}).Expect(t, 200)
		if got, want := waitCommand(t, e.fs, "api uuid_transfer"), "api uuid_transfer "+first+" 1002 XML "+e.tenant; got != want {
			t.Errorf("transfer with the session sent %q, want %q", got, want)
		}
		e.DoHeaders(t, "POST", "/api/telephony/hangup", own.headers(), body).Expect(t, 200)
		if got := waitCommand(t, e.fs, "api uuid_kill"); got != "api uuid_kill "+first {
			t.Errorf("hang-up with the session sent %q", got)
		}
	})
}

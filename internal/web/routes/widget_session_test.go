package routes_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/app/apptest"
)

// webrtcWidget creates extension 1002 and a webrtc widget to it, allowed on
// widgetOrigin, two sessions an hour per address; it answers the widget's
// public call path and object path.
func webrtcWidget(t *testing.T, s *apptest.Server, tenant string, fields map[string]any) (callPath, objPath string) {
	t.Helper()
	base := "/api/tenants/" + tenant
	if s.Do(t, "GET", base+"/extensions/1002", s.Key, nil).Status == 404 {
		s.Do(t, "POST", base+"/extensions/", s.Key, map[string]any{"name": "1002", "first_name": "Desk"}).Expect(t, 201)
	}
	body := map[string]any{
		"name": "browser", "mode": "webrtc", "destination": map[string]any{"type": "extension", "target": "1002"},
		"allowed_origins": []string{widgetOrigin}, "require_captcha": false, "max_calls_per_hour_per_ip": 2,
	}
	for k, v := range fields {
		body[k] = v
	}
	w := s.Do(t, "POST", base+"/click_to_call_widgets/", s.Key, body).Expect(t, 201).Map(t)
	return "/widgets/" + w["public_id"].(string) + "/call", base + "/click_to_call_widgets/" + fmt.Sprint(w["id"])
}

func widgetSIPUsers(t *testing.T, s *apptest.Server, tenant string) int {
	t.Helper()
	var n int
	if err := s.Store.Querier().GetContext(context.Background(), &n, "SELECT COUNT(*) FROM widget_sip_users WHERE tenant = ?", tenant); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestWidgetWebRTCIssuesASIPUser: a webrtc widget answers its allowed
// origin 201 with a random SIP user of the tenant, its one-time password,
// the SIP domain, the platform's SIP WebSocket URL, the number to dial and
// the expiry ten minutes on, in the document's WidgetWebRTCSession shape
// (the contract check of every answer, and the 201 answer the document
// declares); the stored row holds the digest hash, not the password.
// Foreign or missing origins, bad or missing names store nothing; the
// third session of the hour is 429; a disabled widget and a closed
// schedule issue none.
func TestWidgetWebRTCIssuesASIPUser(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "wrtc")
		call, obj := webrtcWidget(t, s, tenant, nil)
		from := map[string]string{"Origin": widgetOrigin}

		var doc struct {
			Paths map[string]map[string]struct {
				Responses map[string]struct {
					Content map[string]struct {
						Schema map[string]any `json:"schema"`
					} `json:"content"`
				} `json:"responses"`
			} `json:"paths"`
		}
		s.Do(t, "GET", "/api/openapi.json", "", nil).Expect(t, 200).JSON(t, &doc)
		if ref := doc.Paths["/widgets/{public_id}/call"]["post"].Responses["201"].Content["application/json"].Schema["$ref"]; ref != "#/components/schemas/WidgetWebRTCSession" {
			t.Fatalf("the document's 201 answer of the widget call is %v", ref)
		}

		before := time.Now()
		r := s.DoHeaders(t, "POST", call, from, map[string]any{"name": "Ann Smith"}).Expect(t, 201)
		if r.Header.Get("Access-Control-Allow-Origin") != widgetOrigin || r.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("answer headers %v", r.Header)
		}
		var got struct {
			Mode string `json:"mode"`
			SIP  struct {
				Username, Password, Domain, URI string
				WebsocketURL                    string `json:"websocket_url"`
			} `json:"sip"`
			Dial      string    `json:"dial"`
			DialURI   string    `json:"dial_uri"`
			ExpiresAt time.Time `json:"expires_at"`
			ExpiresIn int       `json:"expires_in"`
		}
		r.JSON(t, &got)
		if !regexp.MustCompile(`^w[0-9a-f]{24}-`+tenant+`$`).MatchString(got.SIP.Username) || !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(got.SIP.Password) {
			t.Errorf("credentials %+v", got.SIP)
		}
		if got.Mode != "webrtc" || got.SIP.Domain != "sip.test" || got.SIP.URI != "sip:"+got.SIP.Username+"@sip.test" ||
			got.SIP.WebsocketURL != s.Cfg.SIPWSURL || s.Cfg.SIPWSURL == "" || got.Dial != "1002" || got.DialURI != "sip:1002@sip.test" {
			t.Errorf("answer %s (websocket %s)", r.Body, s.Cfg.SIPWSURL)
		}
		if got.ExpiresIn != 600 || got.ExpiresAt.Before(before.Add(10*time.Minute-2*time.Second)) || got.ExpiresAt.After(time.Now().Add(10*time.Minute+time.Second)) {
			t.Errorf("expiry %v in %d s", got.ExpiresAt, got.ExpiresIn)
		}
		var stored struct {
			Tenant string `db:"tenant"`
			A1     string `db:"a1_hash"`
			Name   string `db:"caller_name"`
		}
		if err := s.Store.Querier().GetContext(context.Background(), &stored, "SELECT tenant, a1_hash, caller_name FROM widget_sip_users WHERE username = ?", got.SIP.Username); err != nil {
			t.Fatalf("issued user not stored: %v", err)
		}
		if stored.Tenant != tenant || stored.A1 == got.SIP.Password || len(stored.A1) != 32 || stored.Name != "Ann Smith" {
			t.Errorf("stored %+v", stored)
		}

		for _, c := range []struct {
			headers map[string]string
			body    map[string]any
			status  int
		}{
			{map[string]string{"Origin": "https://evil.example"}, map[string]any{"name": "Ann"}, 403},
			{nil, map[string]any{"name": "Ann"}, 403},
			{from, map[string]any{"name": "${system(id)}"}, 400},
			{from, map[string]any{"name": "x},sb_tenant=other,{"}, 400},
			{from, map[string]any{}, 400}, // ask_name
		} {
			res := s.DoHeaders(t, "POST", call, c.headers, c.body).Expect(t, c.status)
			if c.status == 403 && res.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Errorf("CORS granted to %v", c.headers)
			}
		}
		if n := widgetSIPUsers(t, s, tenant); n != 1 {
			t.Errorf("refused requests stored users: %d", n)
		}

		// The second session of the hour is issued; the third is limited.
		s.DoHeaders(t, "POST", call, from, map[string]any{"name": "Bob"}).Expect(t, 201)
		if lim := s.DoHeaders(t, "POST", call, from, map[string]any{"name": "Cy"}).Expect(t, 429); lim.Header.Get("Retry-After") == "" {
			t.Errorf("429 without Retry-After")
		}

		// Disabled: nothing issued.
		s.Do(t, "PUT", obj, s.Key, map[string]any{"enabled": false}).Expect(t, 200)
		if s.DoHeaders(t, "POST", call, from, map[string]any{"name": "Di"}).Expect(t, 403).Code(t) != "widget_disabled" {
			t.Errorf("disabled widget answer")
		}
		// Outside its schedule: 409 with the closed message.
		sched := s.Do(t, "POST", "/api/tenants/"+tenant+"/schedules/", s.Key, map[string]any{"name": "never", "timezone": "Africa/Johannesburg", "open_periods": []any{}}).Expect(t, 201).Map(t)
		closed, _ := webrtcWidget(t, s, tenant, map[string]any{"name": "closed", "schedule_id": sched["id"], "closed_message": "Back on Monday"})
		if res := s.DoHeaders(t, "POST", closed, from, map[string]any{"name": "Ed"}).Expect(t, 409); res.Code(t) != "closed" || !strings.Contains(string(res.Body), "Back on Monday") {
			t.Errorf("closed answer %s", res.Body)
		}
		// A widget requiring a captcha this server cannot verify issues none.
		captcha, _ := webrtcWidget(t, s, tenant, map[string]any{"name": "captcha", "require_captcha": true})
		s.DoHeaders(t, "POST", captcha, from, map[string]any{"name": "Fay"}).Expect(t, 501)
		if n := widgetSIPUsers(t, s, tenant); n != 2 {
			t.Errorf("users after the limit, the disabled, closed and captcha widgets: %d", n)
		}
	})
}

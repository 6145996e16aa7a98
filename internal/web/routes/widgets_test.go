package routes_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/platform/wait"
)

const widgetOrigin = "https://shop.example"

// widgetEnv creates a callback widget to extension 1002 allowed on
// widgetOrigin, calling South African numbers, two calls an hour per
// address; it answers the widget's public call path and object path.
func widgetEnv(t *testing.T, e *callEnv, fields map[string]any) (callPath, objPath string) {
	t.Helper()
	body := map[string]any{
		"name": "shop", "destination": map[string]any{"type": "extension", "target": "1002"},
		"allowed_origins": []string{widgetOrigin}, "allowed_countries": []string{"ZA"},
		"require_captcha": false, "max_calls_per_hour_per_ip": 2,
	}
	for k, v := range fields {
		body[k] = v
	}
	w := e.Do(t, "POST", "/api/tenants/"+e.tenant+"/click_to_call_widgets/", e.Key, body).Expect(t, 201).Map(t)
	id, _ := w["public_id"].(string)
	if id == "" {
		t.Fatalf("widget without public_id: %v", w)
	}
	return "/widgets/" + id + "/call", "/api/tenants/" + e.tenant + "/click_to_call_widgets/" + fmt.Sprint(w["id"])
}

func originates(e *callEnv) int {
	n := 0
	for _, c := range e.fs.Commands() {
		if strings.HasPrefix(c, "bgapi originate") {
			n++
		}
	}
	return n
}

// TestWidgetPlacesTheCallback: from an allowed origin the widget's call
// reaches the fake as exactly the callback originate (the visitor through
// the tenant's outbound routes, then the destination), the visitor's leg
// goes out on the trunk and the destination rings; the preflight and the
// answer carry CORS for that origin only; foreign or missing origins,
// bad numbers, numbers abroad and names that try to reshape the originate
// are refused with nothing sent; the third call in the hour is 429; a
// disabled widget places nothing.
func TestWidgetPlacesTheCallback(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		routedCallEnv(t, e)
		call, obj := widgetEnv(t, e, nil)
		from := map[string]string{"Origin": widgetOrigin}

		pre := e.DoHeaders(t, "OPTIONS", call, map[string]string{"Origin": widgetOrigin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}, nil).Expect(t, 204)
		if pre.Header.Get("Access-Control-Allow-Origin") != widgetOrigin || !strings.Contains(pre.Header.Get("Access-Control-Allow-Headers"), "Content-Type") {
			t.Errorf("preflight headers %v", pre.Header)
		}
		foreign := e.DoHeaders(t, "OPTIONS", call, map[string]string{"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"}, nil).Expect(t, 403)
		if foreign.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("foreign preflight allowed: %v", foreign.Header)
		}

		r := e.DoHeaders(t, "POST", call, from, map[string]any{"number": "+27825550009", "name": "Ann Smith"}).Expect(t, 202)
		if r.Header.Get("Access-Control-Allow-Origin") != widgetOrigin {
			t.Errorf("answer lacks CORS for its origin: %v", r.Header)
		}
		line := waitCommand(t, e.fs, "bgapi originate")
		id := regexp.MustCompile(`origination_uuid=([0-9a-f-]{36})`).FindStringSubmatch(line)
		if id == nil {
			t.Fatalf("originate without origination_uuid: %s", line)
		}
		pub := strings.Split(call, "/")[2]
		tenantCID := e.Do(t, "GET", "/api/tenants/"+e.tenant, e.Key, nil).Expect(t, 200).Map(t)["callerid"].(string)
		want := "bgapi originate {^^;origination_uuid=" + id[1] + ";user_context=" + e.tenant + ";sb_tenant=" + e.tenant + ";sb_widget=" + pub +
			";effective_caller_id_name='Web: Ann Smith';effective_caller_id_number=+27825550009;toll_allow=internal,local,national,international;outbound_caller_id_number=" + tenantCID + ";sb_call=" + id[1] +
			";sb_callback=true;origination_caller_id_name='Web: Ann Smith';origination_caller_id_number=+27825550009;ignore_early_media=true;originate_timeout=30;hangup_after_bridge=true}loopback/+27825550009/" +
			e.tenant + " 1002 XML " + e.tenant
		if line != want {
			t.Errorf("originate\n got %s\nwant %s", line, want)
		}
		findChannel(t, e.fs, "sofia/external/+27825550009")
		findChannel(t, e.fs, "sofia/internal/1002-"+e.tenant+"@")

		refused := []struct {
			headers map[string]string
			body    map[string]any
			status  int
			field   string
		}{
			{map[string]string{"Origin": "https://evil.example"}, map[string]any{"number": "+27825550009", "name": "Ann"}, 403, ""},
			{map[string]string{"Origin": "https://shop.example.evil.com"}, map[string]any{"number": "+27825550009", "name": "Ann"}, 403, ""},
			{nil, map[string]any{"number": "+27825550009", "name": "Ann"}, 403, ""},
			{from, map[string]any{"number": "0825550009", "name": "Ann"}, 400, "number"},
			{from, map[string]any{"number": "+12025550123", "name": "Ann"}, 400, "number"},
			{from, map[string]any{"number": "+27825550009,sb_tenant=other", "name": "Ann"}, 400, "number"},
			{from, map[string]any{"number": "+27825550009", "name": "x},sb_tenant=other,{"}, 400, "name"},
			{from, map[string]any{"number": "+27825550009", "name": "${system(id)}"}, 400, "name"},
			{from, map[string]any{"number": "+27825550009", "name": "Ann' sb_tenant='x"}, 400, "name"},
			{from, map[string]any{"number": "+27825550009"}, 400, "name"}, // ask_name
		}
		for _, c := range refused {
			got := e.DoHeaders(t, "POST", call, c.headers, c.body).Expect(t, c.status)
			if c.field != "" {
				var body struct {
					Fields map[string]string `json:"fields"`
				}
				got.JSON(t, &body)
				if body.Fields[c.field] == "" {
					t.Errorf("%v: refused without naming %s: %s", c.body, c.field, got.Body)
				}
			}
			if got.Header.Get("Access-Control-Allow-Origin") != "" && c.headers["Origin"] != widgetOrigin {
				t.Errorf("CORS granted to %v", c.headers)
			}
		}
		if n := originates(e); n != 1 {
			t.Fatalf("refused requests sent originates: %d in %q", n, e.fs.Commands())
		}

		// The second call of the hour goes out; the third is limited.
		e.DoHeaders(t, "POST", call, from, map[string]any{"number": "+27825550010", "name": "Bob"}).Expect(t, 202)
		lim := e.DoHeaders(t, "POST", call, from, map[string]any{"number": "+27825550011", "name": "Cy"}).Expect(t, 429)
		if lim.Header.Get("Retry-After") == "" {
			t.Errorf("429 without Retry-After")
		}
		wait.Until(t, 5*time.Second, "second originate", func() bool { return originates(e) == 2 })

		// A disabled widget places nothing.
		e.Do(t, "PUT", obj, e.Key, map[string]any{"enabled": false}).Expect(t, 200)
		e.DoHeaders(t, "POST", call, from, map[string]any{"number": "+27825550012", "name": "Di"}).Expect(t, 403)
		time.Sleep(100 * time.Millisecond)
		if n := originates(e); n != 2 {
			t.Errorf("originates after the limit and the disabled widget: %d", n)
		}
	})
}

// TestWidgetUnknownAndUnsupported: an unknown widget is 404; a widget
// asking for a captcha (which this server cannot verify) or outside its
// schedule places nothing.
func TestWidgetUnknownUnsupportedAndClosed(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		from := map[string]string{"Origin": widgetOrigin}
		e.DoHeaders(t, "POST", "/widgets/nosuchwidget/call", from, map[string]any{"number": "+27825550009", "name": "Ann"}).Expect(t, 404)
		call, _ := widgetEnv(t, e, map[string]any{"name": "captcha", "require_captcha": true})
		e.DoHeaders(t, "POST", call, from, map[string]any{"number": "+27825550009", "name": "Ann"}).Expect(t, 501)
		// Outside its schedule (one with no open periods) the widget is
		// closed and says so with its closed_message.
		sched := e.Do(t, "POST", "/api/tenants/"+e.tenant+"/schedules/", e.Key, map[string]any{"name": "never", "timezone": "Africa/Johannesburg", "open_periods": []any{}}).Expect(t, 201).Map(t)
		closed, _ := widgetEnv(t, e, map[string]any{"name": "closed", "schedule_id": sched["id"], "closed_message": "We are closed until Monday"})
		r := e.DoHeaders(t, "POST", closed, from, map[string]any{"number": "+27825550009", "name": "Ann"}).Expect(t, 409)
		if r.Code(t) != "closed" || !strings.Contains(string(r.Body), "We are closed until Monday") {
			t.Errorf("closed answer %s", r.Body)
		}
		if n := originates(e); n != 0 {
			t.Errorf("originates: %d", n)
		}
	})
}

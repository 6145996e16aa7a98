package fsxml_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
)

const widgetPage = "https://shop.example"

type widgetSession struct {
	SIP struct {
		Username, Password string
	} `json:"sip"`
	Dial string `json:"dial"`
}

// seedWidget creates a webrtc widget to extension 1000 of tenant and
// answers its public id and object path.
func seedWidget(t *testing.T, s *apptest.Server, tenant string) (publicID, obj string) {
	t.Helper()
	w := s.Do(t, "POST", "/api/tenants/"+tenant+"/click_to_call_widgets/", s.Key, map[string]any{
		"name": "browser", "mode": "webrtc", "destination": map[string]any{"type": "extension", "target": "1000"},
		"allowed_origins": []string{widgetPage}, "require_captcha": false, "max_calls_per_hour_per_ip": 50,
	}).Expect(t, 201).Map(t)
	return w["public_id"].(string), fmt.Sprintf("/api/tenants/%s/click_to_call_widgets/%v", tenant, w["id"])
}

func issueWidgetUser(t *testing.T, s *apptest.Server, publicID, name string) widgetSession {
	t.Helper()
	var got widgetSession
	s.DoHeaders(t, "POST", "/widgets/"+publicID+"/call", map[string]string{"Origin": widgetPage}, map[string]any{"name": name}).Expect(t, 201).JSON(t, &got)
	return got
}

func widgetUserFetch(t *testing.T, s *apptest.Server, capturePrefix, user string) node {
	t.Helper()
	return fetchXML(t, s, fakefs.FormWith(capture(t, capturePrefix), "user", user, "domain", "sip.test", "key_value", "sip.test",
		"sip_auth_username", user, "sip_auth_realm", "sip.test"))
}

// TestWidgetVisitorDirectoryUser: the user a webrtc widget issued is
// answered, on this replica and another, for REGISTER and INVITE auth with
// the issued password's digest hash, the widget's own context, the
// widget's caller id name prefix and the visitor's name, and no voicemail;
// it is unknown to user_call, under another tenant's name, when the widget
// is switched off (on the next fetch) and once it has expired (also before
// the expired row is cleaned up, which the next issue does). A prefix
// change shows on the next fetch.
func TestWidgetVisitorDirectoryUser(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := seedExtension(t, s)
		other := s.Tenant(t, "wother")
		pub, obj := seedWidget(t, s, tenant)
		got := issueWidgetUser(t, s, pub, "Ann-Marie O.")
		user := got.SIP.Username
		replica := s.Replica(t)
		for _, srv := range []*apptest.Server{s, replica} {
			for _, c := range []string{"009", "010"} {
				doc := widgetUserFetch(t, srv, c, user)
				users := doc.all("user")
				if len(users) != 1 || users[0].attr("id") != user || users[0].attr("cacheable") != "" {
					t.Fatalf("%s: want the one uncached user %s, got %s", c, user, doc.raw)
				}
				if got, want := doc.param("param", "a1-hash"), a1(user, "sip.test", got.SIP.Password); got != want {
					t.Errorf("%s: a1-hash %q, want %q", c, got, want)
				}
				for name, want := range map[string]string{
					"user_context": "widget-" + pub, "sb_tenant": tenant, "sb_widget": pub,
					"effective_caller_id_name": "Web: Ann-Marie O.", "sb_ext": "", "toll_allow": "",
				} {
					if got := doc.param("variable", name); got != want {
						t.Errorf("%s: %s %q, want %q", c, name, got, want)
					}
				}
				if doc.param("param", "vm-enabled") != "false" || doc.param("param", "vm-password") != "" || doc.param("param", "vm-mailto") != "" {
					t.Errorf("%s: voicemail params %s", c, doc.raw)
				}
			}
		}
		if doc := widgetUserFetch(t, s, "014", user); !doc.notFound() {
			t.Errorf("user_call found the visitor: %s", doc.raw)
		}
		tokenPart := user[:len(user)-len(tenant)]
		if doc := widgetUserFetch(t, s, "009", tokenPart+other); !doc.notFound() {
			t.Errorf("another tenant's name found the visitor: %s", doc.raw)
		}

		s.Do(t, "PUT", obj, s.Key, map[string]any{"callerid_name_prefix": "Site:"}).Expect(t, 200)
		if got := widgetUserFetch(t, s, "009", user).param("variable", "effective_caller_id_name"); got != "Site: Ann-Marie O." {
			t.Errorf("after the prefix change: %q", got)
		}
		s.Do(t, "PUT", obj, s.Key, map[string]any{"enabled": false}).Expect(t, 200)
		if doc := widgetUserFetch(t, replica, "009", user); !doc.notFound() {
			t.Errorf("switched-off widget's user found: %s", doc.raw)
		}
		s.Do(t, "PUT", obj, s.Key, map[string]any{"enabled": true}).Expect(t, 200)
		if doc := widgetUserFetch(t, s, "009", user); doc.notFound() {
			t.Fatalf("switched on again: not found")
		}

		// Expiry: the clock passes the user's expires_at.
		ctx := context.Background()
		if _, err := s.Store.Querier().ExecContext(ctx, "UPDATE widget_sip_users SET expires_at = ? WHERE username = ?", time.Now().Unix()-1, user); err != nil {
			t.Fatal(err)
		}
		for _, srv := range []*apptest.Server{s, replica} {
			if doc := widgetUserFetch(t, srv, "010", user); !doc.notFound() {
				t.Errorf("expired user found: %s", doc.raw)
			}
		}
		issueWidgetUser(t, s, pub, "Bob")
		var n int
		if err := s.Store.Querier().GetContext(ctx, &n, "SELECT COUNT(*) FROM widget_sip_users WHERE username = ?", user); err != nil || n != 0 {
			t.Errorf("expired row kept after the next issue: %d %v", n, err)
		}
	})
}

// TestWidgetContextReachesOnlyItsDestination: the widget's context routes
// the widget's number to its destination and nothing else (an outbound
// number, another extension of the tenant, a feature code), while the
// tenant's own context routes those; a destination change or switching
// the widget off shows on the next fetch.
func TestWidgetContextReachesOnlyItsDestination(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := seedExtension(t, s)
		s.Do(t, "POST", "/api/tenants/"+tenant+"/extensions/", s.Key, map[string]any{"name": "1001", "first_name": "Bea"}).Expect(t, 201)
		pub, obj := seedWidget(t, s, tenant)
		ctx := "widget-" + pub

		doc := fetchXML(t, s, callBody(t, ctx, "1000", "widget"))
		if exts := doc.all("extension"); len(exts) != 1 || fmt.Sprint(doc.actions()) != "[transfer 1000 XML "+tenant+"]" {
			t.Fatalf("widget number: %s", doc.raw)
		}
		if own := fetchXML(t, s, callBody(t, tenant, "1001", "1000")); own.notFound() {
			t.Fatalf("the tenant's own context does not route 1001: the refusals below would prove nothing")
		}
		for _, num := range []string{"1001", "+27215550000", "0215550000", "*98", "fail-1000", "1000;x"} {
			if doc := fetchXML(t, s, callBody(t, ctx, num, "widget")); !doc.notFound() {
				t.Errorf("%s routed in the widget context: %s", num, doc.raw)
			}
		}
		if doc := fetchXML(t, s, callBody(t, "widget-nosuchwidget123", "1000", "widget")); !doc.notFound() {
			t.Errorf("unknown widget context routed: %s", doc.raw)
		}

		s.Do(t, "PUT", obj, s.Key, map[string]any{"destination": map[string]any{"type": "extension", "target": "1001"}}).Expect(t, 200)
		if got := fmt.Sprint(fetchXML(t, s, callBody(t, ctx, "1001", "widget")).actions()); got != "[transfer 1001 XML "+tenant+"]" {
			t.Errorf("after the destination change: %s", got)
		}
		if doc := fetchXML(t, s, callBody(t, ctx, "1000", "widget")); !doc.notFound() {
			t.Errorf("old destination still routed: %s", doc.raw)
		}
		s.Do(t, "PUT", obj, s.Key, map[string]any{"enabled": false}).Expect(t, 200)
		if doc := fetchXML(t, s, callBody(t, ctx, "1001", "widget")); !doc.notFound() {
			t.Errorf("switched-off widget routed: %s", doc.raw)
		}
	})
}

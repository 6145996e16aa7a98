package fakefs

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestSofiaGatewayCommands: the fake's mod_sofia answers the gateway
// commands with mod_sofia 1.10's replies; a rescan fetches sofia.conf for
// the profile (profile=, reconfig=true) and adds only gateways it does not
// hold, so an edited gateway needs killgw first.
func TestSofiaGatewayCommands(t *testing.T) {
	var mu sync.Mutex
	gws := []string{"carrier"}
	var forms []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		mu.Lock()
		defer mu.Unlock()
		forms = append(forms, r.PostForm.Get("key_value")+" profile="+r.PostForm.Get("profile")+" reconfig="+r.PostForm.Get("reconfig"))
		var b strings.Builder
		for _, g := range gws {
			b.WriteString(`<gateway name="` + g + `"><param name="proxy" value="x"/></gateway>`)
		}
		_, _ = w.Write([]byte(`<document type="freeswitch/xml"><section name="configuration"><configuration name="sofia.conf">` +
			`<profiles><profile name="external"><gateways>` + b.String() + `</gateways></profile></profiles></configuration></section></document>`))
	}))
	defer srv.Close()
	s := startFake(t, Options{XMLCurlURL: srv.URL})
	rc := dialRaw(t, s.Addr())
	rc.auth()

	for _, tt := range []struct{ cmd, want string }{
		{"sofia profile external killgw carrier", "-ERR no such gateway.\n"},
		{"sofia profile external rescan", "Reload XML [Success]\n+OK scan complete\n"},
		{"sofia profile nosuch rescan", "Invalid Profile [nosuch]"},
		{"sofia profile external", "Invalid Args!\n"},
		{"sofia profile external killgw", "-ERR missing gw name\n"},
		{"sofia profile external frobnicate", "-ERR Unknown command!\n"},
		{"sofia frobnicate", "Unknown Command [frobnicate]\n"},
	} {
		if got := rc.api(tt.cmd); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.cmd, got, tt.want)
		}
	}
	if got := s.Gateways(); !slices.Equal(got, []string{"external::carrier"}) {
		t.Fatalf("gateways after rescan %q", got)
	}
	mu.Lock()
	if len(forms) == 0 || forms[0] != "sofia.conf profile=external reconfig=true" {
		t.Errorf("fetch %q", forms)
	}
	gws = append(gws, "backup")
	mu.Unlock()
	rc.api("sofia profile external rescan")
	if got := s.Gateways(); !slices.Equal(got, []string{"external::backup", "external::carrier"}) {
		t.Fatalf("gateways after the second rescan %q", got)
	}
	if got := rc.api("sofia profile external killgw carrier"); got != "+OK gateway marked for deletion.\n" {
		t.Errorf("killgw = %q", got)
	}
	if got := s.Gateways(); !slices.Equal(got, []string{"external::backup"}) {
		t.Fatalf("gateways after killgw %q", got)
	}
}

package fakefs

import (
	"net/http"
	"net/http/httptest"
	"regexp"
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
	rc := dialAuthed(t, s.Addr())

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

// TestSofiaXMLStatusGateway: "sofia xmlstatus gateway" lists every loaded
// gateway as xml_gateway_status (mod_sofia.c) prints it, with the fields
// parse_gateways derives from the params; one gateway by name, or
// "Invalid Gateway!".
func TestSofiaXMLStatusGateway(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`<document type="freeswitch/xml"><section name="configuration"><configuration name="sofia.conf">` +
			`<profiles><profile name="external"><gateways>` +
			`<gateway name="carrier"><param name="proxy" value="sip.example:5070"/><param name="register" value="false"/>` +
			`<param name="username" value="acme"/><param name="password" value="s3"/></gateway>` +
			`</gateways><settings><param name="sip-ip" value="192.0.2.2"/><param name="sip-port" value="5080"/></settings>` +
			`</profile></profiles></configuration></section></document>`))
	}))
	defer srv.Close()
	s := startFake(t, Options{XMLCurlURL: srv.URL})
	rc := dialAuthed(t, s.Addr())
	if got, want := rc.api("sofia xmlstatus gateway"), "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n<gateways>\n</gateways>\n"; got != want {
		t.Errorf("no gateways: %q, want %q", got, want)
	}
	rc.api("sofia profile external rescan")
	gw := "  <gateway>\n    <name>carrier</name>\n    <profile>external</profile>\n    <scheme>Digest</scheme>\n" +
		"    <realm>sip.example:5070</realm>\n    <username>acme</username>\n    <password>yes</password>\n" +
		"    <from>&lt;sip:acme@sip.example:5070&gt;</from>\n" +
		"    <contact>&lt;sip:gw+carrier@192.0.2.2:5080;transport=udp;gw=carrier&gt;</contact>\n" +
		"    <exten>acme</exten>\n    <to>sip:acme@sip.example:5070</to>\n    <proxy>sip:sip.example:5070</proxy>\n" +
		"    <context>default</context>\n    <expires>3600</expires>\n    <freq>3600</freq>\n    <ping>0</ping>\n" +
		"    <pingfreq>0</pingfreq>\n    <pingmin>0</pingmin>\n    <pingcount>0</pingcount>\n    <pingmax>0</pingmax>\n" +
		"    <pingtime>0.00</pingtime>\n    <pinging>0</pinging>\n    <state>NOREG</state>\n    <status>UP</status>\n" +
		"    <uptime-usec>N</uptime-usec>\n    <calls-in>0</calls-in>\n    <calls-out>0</calls-out>\n" +
		"    <failed-calls-in>0</failed-calls-in>\n    <failed-calls-out>0</failed-calls-out>\n  </gateway>\n"
	head := "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n"
	// The uptime counts from the load (mod_sofia: since the status went UP).
	uptime := regexp.MustCompile(`<uptime-usec>[1-9][0-9]*</uptime-usec>`)
	api := func(cmd string) string { return uptime.ReplaceAllString(rc.api(cmd), "<uptime-usec>N</uptime-usec>") }
	if got, want := api("sofia xmlstatus gateway"), head+"<gateways>\n"+gw+"</gateways>\n"; got != want {
		t.Errorf("xmlstatus gateway:\n%s\nwant\n%s", got, want)
	}
	if got, want := api("sofia xmlstatus gateway carrier"), head+gw; got != want {
		t.Errorf("xmlstatus gateway carrier:\n%s\nwant\n%s", got, want)
	}
	if got := rc.api("sofia xmlstatus gateway nosuch"); got != "Invalid Gateway!\n" {
		t.Errorf("unknown gateway: %q", got)
	}
	if got := rc.api("sofia xmlstatus gateways carrier"); got != "Invalid Syntax!\n" {
		t.Errorf("xmlstatus with an unknown form: %q", got)
	}
}

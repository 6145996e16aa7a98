package egress_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/platform/egress"
)

func TestForbiddenReason(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1": "loopback", "127.9.9.9": "loopback", "::1": "loopback", "::ffff:127.0.0.1": "loopback",
		"10.0.0.1": "private", "172.16.5.5": "private", "192.168.1.1": "private", "fd00::1": "private", "100.64.0.1": "private",
		"169.254.169.254": "link-local", "fe80::1": "link-local", "0.0.0.0": "unspecified", "::": "unspecified",
		"224.0.0.1": "link-local", "239.1.1.1": "multicast", "ff02::1": "link-local", "ff05::1": "multicast",
		"93.184.216.34": "", "2606:2800:220:1::1": "", "::ffff:93.184.216.34": "",
	} {
		if got := egress.ForbiddenReason(netip.MustParseAddr(addr)); got != want {
			t.Errorf("%s: %q, want %q", addr, got, want)
		}
	}
}

// counting is a loopback listener that counts the requests reaching it.
func counting(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if h != nil {
			h(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s, &n
}

// The guarded client connects to no loopback address however it is
// named: 127.0.0.1, [::1], localhost (a name resolved at dial time).
func TestClientRefusesLoopback(t *testing.T) {
	srv, hits := counting(t, nil)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	urls := []string{srv.URL, "http://localhost:" + port + "/"}
	if l, err := net.Listen("tcp", "[::1]:0"); err == nil {
		v6 := &httptest.Server{Listener: l, Config: srv.Config}
		v6.Start()
		t.Cleanup(v6.Close)
		urls = append(urls, v6.URL)
	}
	c := egress.NewClient(egress.Options{})
	for _, u := range urls {
		resp, err := c.Get(u)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("%s: answered %d, want refused", u, resp.StatusCode)
		}
		if !errors.Is(err, egress.ErrRefused) || egress.KindOf(err) != egress.Refused {
			t.Errorf("%s: %v, want the guard's refusal", u, err)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("%d requests reached the loopback listener", hits.Load())
	}
	// The operator may open a range (or everything).
	for _, g := range []egress.Guard{{Nets: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, {AllowAll: true}} {
		resp, err := egress.NewClient(egress.Options{Guard: g}).Get(srv.URL)
		if err != nil {
			t.Fatalf("guard %+v: %v", g, err)
		}
		resp.Body.Close()
	}
	if hits.Load() != 2 {
		t.Fatalf("%d requests with the range opened, want 2", hits.Load())
	}
}

func TestGuardRanges(t *testing.T) {
	g := egress.Guard{Nets: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}}
	for addr, ok := range map[string]bool{
		"10.1.2.3": true, "10.2.0.1": false, "192.168.0.1": false, "172.31.255.255": false, "169.254.169.254": false,
		"fd12::1": false, "::ffff:10.1.0.9": true, "0.0.0.0": false, "8.8.8.8": true, "2001:4860:4860::8888": true,
	} {
		if err := g.Check(netip.MustParseAddr(addr)); (err == nil) != ok {
			t.Errorf("%s: %v, want allowed %v", addr, err, ok)
		}
	}
}

// A redirect is the answer: the client does not go to its target.
func TestClientFollowsNoRedirect(t *testing.T) {
	target, hits := counting(t, nil)
	from, _ := counting(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/x?"+r.URL.RawQuery, http.StatusFound)
	})
	c := egress.NewClient(egress.Options{Guard: egress.Guard{AllowAll: true}})
	resp, err := c.Get(from.URL + "/?password=secret")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || hits.Load() != 0 {
		t.Fatalf("status %d, %d requests at the redirect target; want 302 and none", resp.StatusCode, hits.Load())
	}
}

func TestClientCapsTheAnswer(t *testing.T) {
	big := strings.Repeat("x", 5000)
	srv, _ := counting(t, func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, big) })
	c := egress.NewClient(egress.Options{Guard: egress.Guard{AllowAll: true}, MaxBody: 1000})
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if !errors.Is(err, egress.ErrTooLarge) || len(got) != 1000 || egress.KindOf(err) != egress.TooLarge {
		t.Fatalf("read %d bytes, %v; want 1000 and ErrTooLarge", len(got), err)
	}
	// An answer of exactly the cap is whole.
	c = egress.NewClient(egress.Options{Guard: egress.Guard{AllowAll: true}, MaxBody: 5000})
	resp, err = c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if got, err := io.ReadAll(resp.Body); err != nil || len(got) != 5000 {
		t.Fatalf("read %d bytes, %v; want 5000", len(got), err)
	}
}

func TestHosts(t *testing.T) {
	h, err := egress.ParseHosts(" Kannel.Example.NET, *.sms.example.org, 203.0.113.7, [2001:db8::1] ")
	if err != nil {
		t.Fatal(err)
	}
	for url, ok := range map[string]bool{
		"http://kannel.example.net:13013/cgi-bin/sendsms": true,
		"https://KANNEL.example.net./x":                   true,
		"http://a.sms.example.org/":                       true,
		"http://sms.example.org/":                         false,
		"http://evilsms.example.org/":                     false,
		"http://203.0.113.7:13013/":                       true,
		"http://[2001:db8::1]:13013/":                     true,
		"http://127.0.0.1:13013/":                         false,
		"http://localhost/":                               false,
		"http://[::1]/":                                   false,
		"ftp://kannel.example.net/":                       false,
		"http://user:pw@kannel.example.net/":              false,
		"kannel.example.net/x":                            false,
	} {
		if _, err := h.CheckURL(url); (err == nil) != ok {
			t.Errorf("%s: %v, want allowed %v", url, err, ok)
		}
	}
	if _, err := (egress.Hosts(nil)).CheckURL("https://kannel.example.net/"); err == nil {
		t.Error("an empty list allows a host")
	}
	if any, _ := egress.ParseHosts("*"); !any.Allows("anything.example") {
		t.Error("* does not allow every host")
	}
	for _, bad := range []string{"http://x", "a/b", "*.", "x@y"} {
		if _, err := egress.ParseHosts(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := egress.ParseNets("10.0.0.0/8, 192.168.1.10,::1"); err != nil {
		t.Error(err)
	}
	if _, err := egress.ParseNets("10.0.0.0/33"); err == nil {
		t.Error("bad CIDR accepted")
	}
}

// A receiver that never answers costs a request its timeout, no more.
func TestClientTimesOut(t *testing.T) {
	release := make(chan struct{})
	srv, _ := counting(t, func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	c := egress.NewClient(egress.Options{Guard: egress.Guard{AllowAll: true}, Timeout: 200 * time.Millisecond})
	resp, err := c.Get(srv.URL)
	if err == nil {
		resp.Body.Close()
		t.Fatal("a hanging receiver answered")
	}
	if egress.KindOf(err) != egress.Timeout {
		t.Fatalf("%v: kind %s, want timeout", err, egress.KindOf(err))
	}
}

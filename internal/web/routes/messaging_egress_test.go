package routes_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// sendsmsListener is a loopback HTTP listener standing for what a tenant
// points a Kannel channel at; it counts the requests that reach it.
type sendsmsListener struct {
	*httptest.Server
	hits atomic.Int32
	// queries are the query strings received.
	queries chan string
}

func newSendsmsListener(t *testing.T, h http.HandlerFunc) *sendsmsListener {
	t.Helper()
	l := &sendsmsListener{queries: make(chan string, 16)}
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.hits.Add(1)
		select {
		case l.queries <- r.URL.RawQuery:
		default:
		}
		if h != nil {
			h(w, r)
		}
	}))
	t.Cleanup(l.Close)
	return l
}

func (l *sendsmsListener) port() string {
	_, p, _ := net.SplitHostPort(l.Listener.Addr().String())
	return p
}

// next waits for the listener's next request and returns its query.
func (l *sendsmsListener) next(t *testing.T) string {
	t.Helper()
	select {
	case q := <-l.queries:
		return q
	case <-time.After(15 * time.Second):
		t.Fatal("no request reached the listener")
		return ""
	}
}

// kannelChannel is a Kannel channel body with sendsms_url u.
func kannelChannel(name, u string) map[string]any {
	return map[string]any{"name": name, "type": "sms", "provider": "kannel", "sender": "+27115550000", "rate_per_second": 100,
		"credentials": map[string]any{"sendsms_url": u, "username": "sb-user", "password": "sb-password-0001", "callback_secret": kSecret}}
}

// Security item 1 (SSRF): a tenant could point a Kannel channel at
// loopback or the internal network. Unless the operator lists the host
// (SWITCHBOARD_EGRESS_ALLOWED_HOSTS), the channel is refused when written,
// naming the field.
func TestKannelURLMustNameAnAllowedHost(t *testing.T) {
	eachMessagingWith(t, map[string]string{"SWITCHBOARD_EGRESS_ALLOWED_HOSTS": "kannel.example.net"}, func(t *testing.T, s *msgServer) {
		key := s.KeyFor(t, map[string]any{"tenant": s.tenant})
		base := "/api/tenants/" + s.tenant + "/messaging_channels/"
		for i, u := range []string{
			"http://127.0.0.1:13013/cgi-bin/sendsms", "http://[::1]:13013/cgi-bin/sendsms", "http://localhost:13013/cgi-bin/sendsms",
			"http://LOCALHOST./x", "http://169.254.169.254/latest/meta-data/", "http://10.0.0.5/", "http://kannel.example.net.evil.example/",
			"ftp://kannel.example.net/", "http://user:pw@kannel.example.net/", "/cgi-bin/sendsms",
		} {
			r := s.Do(t, "POST", base, key, kannelChannel(fmt.Sprintf("k%d", i), u)).Expect(t, 400)
			var e struct {
				Code   string
				Fields map[string]string
			}
			r.JSON(t, &e)
			if e.Code != "validation_failed" || e.Fields["credentials.sendsms_url"] == "" {
				t.Errorf("%s: %s, want validation_failed naming credentials.sendsms_url", u, r.Body)
			}
		}
		id := s.Do(t, "POST", base, key, kannelChannel("ok", "http://kannel.example.net:13013/cgi-bin/sendsms")).Expect(t, 201).Map(t)["id"]
		upd := kannelChannel("ok", "http://127.0.0.1:13013/cgi-bin/sendsms")
		delete(upd, "name")
		if r := s.Do(t, "PUT", fmt.Sprint(base, id), key, upd).Expect(t, 400); !strings.Contains(string(r.Body), "credentials.sendsms_url") {
			t.Errorf("update to loopback: %s", r.Body)
		}
	})
}

// A host the operator lists that resolves to (or is) a loopback address
// is still refused when connecting unless its range is opened
// (SWITCHBOARD_EGRESS_ALLOWED_NETS): the send fails with a classified
// reason and nothing reaches the listener.
func TestKannelSendRefusedAtPrivateAddress(t *testing.T) {
	l := newSendsmsListener(t, nil)
	urls := []string{l.URL + "/cgi-bin/sendsms", "http://localhost:" + l.port() + "/cgi-bin/sendsms"}
	if v6, err := net.Listen("tcp", "[::1]:0"); err == nil {
		s6 := &httptest.Server{Listener: v6, Config: l.Config}
		s6.Start()
		t.Cleanup(s6.Close)
		urls = append(urls, s6.URL+"/cgi-bin/sendsms")
	}
	eachMessagingWith(t, map[string]string{"SWITCHBOARD_EGRESS_ALLOWED_HOSTS": "127.0.0.1,localhost,::1"}, func(t *testing.T, s *msgServer) {
		key := s.KeyFor(t, map[string]any{"tenant": s.tenant})
		for i, u := range urls {
			ch := s.Do(t, "POST", "/api/tenants/"+s.tenant+"/messaging_channels/", key, kannelChannel(fmt.Sprintf("k%d", i), u)).Expect(t, 201).Map(t)["id"]
			id := s.Do(t, "POST", "/api/messaging/send", key, map[string]any{"channel_id": ch, "to": "+27825550001", "body": "hi"}).Expect(t, 202).Map(t)["id"]
			m := s.waitStatus(t, id, "failed")
			if m["error_code"] != "provider_not_allowed" || strings.Contains(fmt.Sprint(m["error_message"]), "127.0.0.1") {
				t.Errorf("%s: %v, want provider_not_allowed with a fixed message", u, m)
			}
		}
		if n := l.hits.Load(); n != 0 {
			t.Fatalf("%d requests reached the loopback listener", n)
		}
	})
}

// Where the operator allows the address, the provider's answer is still
// never shown: a redirect is not followed (the channel's credentials never
// reach its target) and an error page's text stays out of error_message.
func TestKannelAnswerNotEchoedNorRedirectFollowed(t *testing.T) {
	const internal = "internal-admin-page: db_password=hunter2"
	target := newSendsmsListener(t, func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, internal) })
	redirect := newSendsmsListener(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/steal?"+r.URL.RawQuery, http.StatusFound)
	})
	notFound := newSendsmsListener(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, internal)
	})
	forbidden := newSendsmsListener(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, "Authorization failed for sendsms: "+internal)
	})
	eachMessaging(t, func(t *testing.T, s *msgServer) {
		key := s.KeyFor(t, map[string]any{"tenant": s.tenant})
		for _, c := range []struct {
			l    *sendsmsListener
			code string
		}{{redirect, "provider_rejected"}, {notFound, "provider_rejected"}, {forbidden, "provider_auth_failed"}} {
			ch := s.Do(t, "POST", "/api/tenants/"+s.tenant+"/messaging_channels/", key, kannelChannel("k"+c.l.port(), c.l.URL+"/cgi-bin/sendsms")).Expect(t, 201).Map(t)["id"]
			id := s.Do(t, "POST", "/api/messaging/send", key, map[string]any{"channel_id": ch, "to": "+27825550001", "body": "hi"}).Expect(t, 202).Map(t)["id"]
			if q := c.l.next(t); !strings.Contains(q, "password=sb-password-0001") {
				t.Fatalf("the listener did not get the send: %q", q)
			}
			m := s.waitStatus(t, id, "failed")
			msg := fmt.Sprint(m["error_message"])
			if m["error_code"] != c.code || msg == "" || strings.Contains(msg, "hunter2") || strings.Contains(msg, "internal") ||
				strings.Contains(msg, target.port()) || strings.Contains(msg, "Found") {
				t.Errorf("%s: error_code %v error_message %q, want %s and a fixed message", c.l.URL, m["error_code"], msg, c.code)
			}
		}
		if n := target.hits.Load(); n != 0 {
			t.Fatalf("the redirect was followed: %d requests (with the channel's credentials) reached its target", n)
		}
	})
}

// A closed port shows a classified, transient reason, not the dial error
// (which told a port scanner which ports are open).
func TestKannelUnreachableProviderClassified(t *testing.T) {
	l := newSendsmsListener(t, nil)
	closed := l.URL
	l.Close()
	eachMessaging(t, func(t *testing.T, s *msgServer) {
		key := s.KeyFor(t, map[string]any{"tenant": s.tenant})
		ch := s.Do(t, "POST", "/api/tenants/"+s.tenant+"/messaging_channels/", key, kannelChannel("closed", closed+"/cgi-bin/sendsms")).Expect(t, 201).Map(t)["id"]
		id := s.Do(t, "POST", "/api/messaging/send", key, map[string]any{"channel_id": ch, "to": "+27825550001", "body": "hi"}).Expect(t, 202).Map(t)["id"]
		m := s.waitMessage(t, id, "a first failed attempt", func(m map[string]any) bool { return m["attempts"] != float64(0) })
		if m["status"] != "queued" || m["error_code"] != "provider_unreachable" || strings.Contains(fmt.Sprint(m["error_message"]), "refused") {
			t.Errorf("closed port: %v, want queued (retried) with provider_unreachable and a fixed message", m)
		}
	})
}

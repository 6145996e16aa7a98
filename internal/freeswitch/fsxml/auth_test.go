package fsxml_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/freeswitch/fsxml"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

func TestFetchAuth(t *testing.T) {
	body := fakefs.FormWith(capture(t, "009"), "user", "1000-nobody", "domain", "sip.test", "key_value", "sip.test")
	for _, e := range apptest.Envs(t) {
		t.Run(e.Name, func(t *testing.T) {
			t.Run("basic", func(t *testing.T) {
				s := apptest.Start(t, e, map[string]string{"SWITCHBOARD_XMLCURL_USER": "fs", "SWITCHBOARD_XMLCURL_PASSWORD": "pw-123456"})
				r := post(t, s, body, "", "").Expect(t, 401)
				if r.Code(t) != "unauthorized" || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Basic") {
					t.Errorf("no credentials: code %q WWW-Authenticate %q", r.Code(t), r.Header.Get("WWW-Authenticate"))
				}
				post(t, s, body, "fs", "wrong").Expect(t, 401)
				post(t, s, body, "other", "pw-123456").Expect(t, 401)
				post(t, s, body, "fs", "pw-123456").Expect(t, 200)
			})
			t.Run("allow list refuses loopback", func(t *testing.T) {
				s := apptest.Start(t, e, map[string]string{"SWITCHBOARD_XMLCURL_ALLOW": "10.0.0.0/8"})
				if r := post(t, s, body, "", "").Expect(t, 403); r.Code(t) != "forbidden" {
					t.Errorf("code %q", r.Code(t))
				}
				// A forwarded header must not help.
				r := s.DoHeaders(t, "POST", "/fs/xml", map[string]string{"X-Forwarded-For": "10.1.2.3"}, body)
				r.Expect(t, 403)
			})
			t.Run("allow list admits", func(t *testing.T) {
				s := apptest.Start(t, e, map[string]string{"SWITCHBOARD_XMLCURL_ALLOW": "127.0.0.0/8"})
				post(t, s, body, "", "").Expect(t, 200)
			})
			t.Run("default is loopback only", func(t *testing.T) {
				s := apptest.Start(t, e, nil)
				post(t, s, body, "", "").Expect(t, 200)
			})
		})
	}
}

// TestAuthorizeAddresses covers peers a loopback test server cannot
// produce: remote addresses under each configuration.
func TestAuthorizeAddresses(t *testing.T) {
	_, lan, _ := net.ParseCIDR("192.0.2.0/24")
	for _, tc := range []struct {
		name string
		cfg  fsxml.Config
		peer string
		auth string
		want error
	}{
		{"default loopback v4", fsxml.Config{}, "127.0.0.1", "", nil},
		{"default loopback v6", fsxml.Config{}, "::1", "", nil},
		{"default remote", fsxml.Config{}, "192.0.2.7", "", fsxml.ErrForbidden},
		{"allow list match", fsxml.Config{Allow: []*net.IPNet{lan}}, "192.0.2.7", "", nil},
		{"allow list miss", fsxml.Config{Allow: []*net.IPNet{lan}}, "198.51.100.1", "", fsxml.ErrForbidden},
		{"basic from remote", fsxml.Config{User: "fs", Password: "pw"}, "198.51.100.1", "Basic ZnM6cHc=", nil},
		{"basic wrong", fsxml.Config{User: "fs", Password: "pw"}, "198.51.100.1", "Basic ZnM6cHg=", fsxml.ErrUnauthorized},
		{"both, address wrong", fsxml.Config{User: "fs", Password: "pw", Allow: []*net.IPNet{lan}}, "198.51.100.1", "Basic ZnM6cHc=", fsxml.ErrForbidden},
		{"both, all right", fsxml.Config{User: "fs", Password: "pw", Allow: []*net.IPNet{lan}}, "192.0.2.9", "Basic ZnM6cHc=", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := fsxml.New(nil, nil, tc.cfg, nil)
			if got := svc.Authorize(net.ParseIP(tc.peer), tc.auth); !errors.Is(got, tc.want) || (got == nil) != (tc.want == nil) {
				t.Errorf("Authorize = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRedisOutage: with Redis unreachable (a closed port), fetches are
// still answered from the database.
func TestRedisOutage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		tenant := storetest.Name("out")
		if _, err := st.Create(ctx, st.Registry().Resource("tenants"), models.Owner{}, map[string]any{"tenant": tenant}); err != nil {
			t.Fatal(err)
		}
		o, err := st.Tenant(ctx, tenant)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Create(ctx, st.Registry().Resource("extensions"), o, map[string]any{"name": "1000", "sip_secret": secret1000}); err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
		defer rdb.Close()
		svc := fsxml.New(st, rdb, fsxml.Config{Domain: "sip.test"}, nil)
		user := "1000-" + tenant
		doc, err := svc.Fetch(ctx, fakefs.FormWith(capture(t, "009"), "user", user, "domain", "sip.test", "key_value", "sip.test"))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := parse(t, doc).param("param", "a1-hash"), a1(user, "sip.test", secret1000); got != want {
			t.Errorf("a1-hash %q, want %q\n%s", got, want, doc)
		}
	})
}

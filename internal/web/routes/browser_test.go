package routes_test

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// rawRequest sends exactly the given headers (no Content-Type unless named).
func rawRequest(t *testing.T, s *apptest.Server, method, path, body string, headers map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body == "" {
		req.Body = nil
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// Seen item 5: a page elsewhere created a platform administrator with the
// browser's cached Basic credentials, sending JSON as text/plain, a form,
// XML or no content type, from a foreign Origin.
func TestBrowserWritesNeedJSONAndOwnOrigin(t *testing.T) {
	apptest.Each(t, map[string]string{"SWITCHBOARD_BASE_URL": "https://switchboard.example.net/"}, func(t *testing.T, s *apptest.Server) {
		boss := storetest.Name("boss")
		if _, err := s.Store.SetAdmin(t.Context(), boss, adminPassword); err != nil {
			t.Fatal(err)
		}
		auth := basicAuth(boss, adminPassword)["Authorization"]
		var refused []string
		victim := func() string {
			name := storetest.Name("evil")
			refused = append(refused, name)
			return `{"username":"` + name + `","password":"attacker password","role":"platform_admin","enabled":true}`
		}
		for _, ct := range []string{"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml", ""} {
			h := map[string]string{"Authorization": auth}
			if ct != "" {
				h["Content-Type"] = ct
			}
			status, body := rawRequest(t, s, "POST", "/api/administrators/", victim(), h)
			if status != 415 || !strings.Contains(body, `"unsupported_media_type"`) {
				t.Errorf("Content-Type %q: status %d %s, want 415 unsupported_media_type", ct, status, body)
			}
		}
		for _, o := range []string{"https://evil.example", "null", "http://switchboard.example.net", "https://switchboard.example.net:8443"} {
			status, body := rawRequest(t, s, "POST", "/api/administrators/", victim(), map[string]string{"Authorization": auth, "Content-Type": "application/json", "Origin": o})
			if status != 403 || !strings.Contains(body, `"forbidden_origin"`) {
				t.Errorf("Origin %q: status %d %s, want 403 forbidden_origin", o, status, body)
			}
			if status, _ := rawRequest(t, s, "DELETE", "/api/administrators/1", "", map[string]string{"Authorization": auth, "Origin": o}); status != 403 {
				t.Errorf("DELETE from Origin %q: status %d", o, status)
			}
		}
		// Nothing was created by the refused requests.
		var admins []map[string]any
		s.Do(t, "GET", "/api/administrators/?limit=1000", s.Key, nil).Expect(t, 200).JSON(t, &admins)
		for _, a := range admins {
			if slices.Contains(refused, a["username"].(string)) {
				t.Fatalf("a refused request created administrator %v", a["username"])
			}
		}
		// The installation's own origin, or none (API clients), is accepted.
		for _, o := range []string{"https://switchboard.example.net", ""} {
			h := map[string]string{"Authorization": auth, "Content-Type": "application/json; charset=utf-8"}
			if o != "" {
				h["Origin"] = o
			}
			if status, body := rawRequest(t, s, "POST", "/api/administrators/", victim(), h); status != 201 {
				t.Errorf("Origin %q: status %d %s", o, status, body)
			}
		}
		// A DELETE without a body needs no content type; reads need neither.
		tenant := s.Tenant(t, "csrf")
		if status, body := rawRequest(t, s, "DELETE", "/api/tenants/"+tenant, "", map[string]string{"X-API-Key": s.Key}); status != 204 {
			t.Errorf("body-less DELETE: %d %s", status, body)
		}
		if status, _ := rawRequest(t, s, "GET", "/api/tenants/", "", map[string]string{"Authorization": auth, "Origin": "https://evil.example"}); status != 200 {
			t.Errorf("GET with a foreign Origin: %d (reads change nothing; CORS keeps the answer from the page)", status)
		}
		// FreeSWITCH posts forms to /fs/xml.
		if status, body := rawRequest(t, s, "POST", "/fs/xml", "section=directory&purpose=gateways", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}); status != 200 {
			t.Errorf("/fs/xml form post: %d %s", status, body)
		}
	})
}

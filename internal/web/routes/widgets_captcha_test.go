package routes_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

// fakeSiteverify answers like Turnstile's and hCaptcha's siteverify: a form
// POST of secret, response and remoteip; "good" is accepted under the
// right secret, "down" makes the provider fail, anything else is rejected.
type fakeSiteverify struct {
	*httptest.Server
	mu    sync.Mutex
	forms []map[string]string
}

func startSiteverify(t *testing.T, secret string) *fakeSiteverify {
	f := &fakeSiteverify{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" || r.ParseForm() != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.forms = append(f.forms, map[string]string{"secret": r.PostForm.Get("secret"), "response": r.PostForm.Get("response"), "remoteip": r.PostForm.Get("remoteip")})
		f.mu.Unlock()
		var out map[string]any
		switch {
		case r.PostForm.Get("response") == "down":
			http.Error(w, "unavailable", http.StatusBadGateway)
			return
		case r.PostForm.Get("secret") != secret:
			out = map[string]any{"success": false, "error-codes": []string{"invalid-input-secret"}}
		case r.PostForm.Get("response") == "good":
			out = map[string]any{"success": true, "error-codes": []string{}, "hostname": "shop.example"}
		default:
			out = map[string]any{"success": false, "error-codes": []string{"invalid-input-response"}}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeSiteverify) seen() []map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]string(nil), f.forms...)
}

// TestWidgetCaptcha: with a siteverify endpoint configured, a widget that
// requires a captcha checks the visitor's token with it (this site's
// secret, the token, the visitor's address) before anything is placed: no
// token is 400, a rejected token 403, an unreachable provider 503, each
// with nothing originated; an accepted token places the callback.
func TestWidgetCaptcha(t *testing.T) {
	for _, be := range apptest.Envs(t) {
		t.Run(be.Name, func(t *testing.T) {
			verify := startSiteverify(t, "s3cret")
			fs := startFake(t)
			s := apptest.Start(t, be, map[string]string{"SWITCHBOARD_ESL_NODES": fs.Addr(), "SWITCHBOARD_RECORDINGS_DIR": "/rec",
				"SWITCHBOARD_CAPTCHA_VERIFY_URL": verify.URL + "/siteverify", "SWITCHBOARD_CAPTCHA_SECRET": "s3cret"})
			e := setupCallEnv(t, s, fs)
			waitEvents(t, fs, 1)
			routedCallEnv(t, e)
			call, _ := widgetEnv(t, e, map[string]any{"require_captcha": true, "max_calls_per_hour_per_ip": 10})
			from := map[string]string{"Origin": widgetOrigin}
			body := func(token string) map[string]any {
				return map[string]any{"number": "+27825550009", "name": "Ann", "captcha_token": token}
			}

			r := e.DoHeaders(t, "POST", call, from, map[string]any{"number": "+27825550009", "name": "Ann"}).Expect(t, 400)
			if !strings.Contains(string(r.Body), "captcha_token") {
				t.Errorf("no token: %s", r.Body)
			}
			if r := e.DoHeaders(t, "POST", call, from, body("forged")).Expect(t, 403); r.Code(t) != "captcha_failed" {
				t.Errorf("rejected token: %s", r.Body)
			}
			if r := e.DoHeaders(t, "POST", call, from, body("down")).Expect(t, 503); r.Code(t) != "captcha_unavailable" || strings.Contains(string(r.Body), "502") {
				t.Errorf("provider down: %s", r.Body)
			}
			if n := originates(e); n != 0 {
				t.Fatalf("%d originates before an accepted captcha", n)
			}
			e.DoHeaders(t, "POST", call, from, body("good")).Expect(t, 202)
			wait.Until(t, 5*time.Second, "the callback originate", func() bool { return originates(e) == 1 })

			seen := verify.seen()
			if len(seen) != 3 {
				t.Fatalf("siteverify asked %d times: %v", len(seen), seen)
			}
			for i, want := range []string{"forged", "down", "good"} {
				if seen[i]["secret"] != "s3cret" || seen[i]["response"] != want || seen[i]["remoteip"] == "" {
					t.Errorf("siteverify form %d: %v", i, seen[i])
				}
			}
			// A widget without the requirement never asks the provider.
			plain, _ := widgetEnv(t, e, map[string]any{"name": "plain"})
			e.DoHeaders(t, "POST", plain, from, body("")).Expect(t, 202)
			if len(verify.seen()) != 3 {
				t.Errorf("siteverify asked for a widget without captcha")
			}
		})
	}
}

package routes_test

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
)

func TestWrongMethodAnswers405WithAllow(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "allow")
		s.Do(t, "POST", "/api/tenants/"+tenant+"/extensions/", s.Key, map[string]any{"name": "1001"}).Expect(t, 201)
		cases := []struct{ method, path, allow string }{
			{"PATCH", "/api/tenants/" + tenant + "/extensions/1001", "DELETE, GET, PUT"},
			{"DELETE", "/api/tenants/" + tenant + "/extensions/", "GET, POST"},
			{"POST", "/healthz", "GET"},
		}
		for _, c := range cases {
			r := s.Do(t, c.method, c.path, s.Key, nil).Expect(t, 405)
			if got := r.Header.Get("Allow"); got != c.allow {
				t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
			}
			if r.Code(t) != "method_not_allowed" || !strings.Contains(r.Map(t)["error"].(string), c.allow) {
				t.Errorf("%s %s: body %s", c.method, c.path, r.Body)
			}
		}
		// A path no route declares is still 404.
		if r := s.Do(t, "PATCH", "/api/no-such-thing", s.Key, nil).Expect(t, 404); r.Header.Get("Allow") != "" {
			t.Errorf("404 with Allow %q", r.Header.Get("Allow"))
		}
	})
}

func TestBasicCredentialsOnActionEndpointSayAPIKeyRequired(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		if _, err := s.Store.SetAdmin(t.Context(), "actionadmin", "correct horse battery"); err != nil {
			t.Fatal(err)
		}
		basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("actionadmin:correct horse battery"))
		// The same credentials work on a configuration route...
		s.DoHeaders(t, "GET", "/api/tenants/", map[string]string{"Authorization": basic}, nil).Expect(t, 200)
		// ...and are named as the wrong kind on an action route.
		r := s.DoHeaders(t, "POST", "/api/telephony/call", map[string]string{"Authorization": basic},
			map[string]any{"from": "+27825550001", "to": "1002"}).Expect(t, 401)
		msg, _ := r.Map(t)["error"].(string)
		if r.Code(t) != "api_key_required" || !strings.Contains(msg, "X-API-Key") || strings.Contains(msg, "invalid or revoked") {
			t.Errorf("body %s", r.Body)
		}
		// No credentials at all stay the generic 401.
		if r := s.Do(t, "POST", "/api/telephony/call", "", map[string]any{"from": "+27825550001", "to": "1002"}).Expect(t, 401); r.Code(t) != "unauthorized" {
			t.Errorf("no credentials: %s", r.Body)
		}
	})
}

func TestValidationMessagesInWords(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		r := s.Do(t, "POST", "/api/tenants/", s.Key, map[string]any{"tenant": "no-hyphens", "callerid": "12"}).Expect(t, 400)
		var body struct {
			Fields map[string]string `json:"fields"`
		}
		r.JSON(t, &body)
		if body.Fields["tenant"] != "must be 2-32 letters, digits or underscores" ||
			body.Fields["callerid"] != "must be 3-15 digits, optionally starting with +" {
			t.Errorf("fields %v", body.Fields)
		}
		for field, msg := range body.Fields {
			if strings.ContainsAny(msg, "^$[]{}\\") {
				t.Errorf("%s: the message shows a regular expression: %q", field, msg)
			}
		}
	})
}

func TestPhoneNumbersValidatedAndNormalised(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		for _, bad := range []string{"+1000000", "+999123456789", "0215550100", "+27 21 555"} {
			r := s.Do(t, "POST", "/api/dids/", s.Key, map[string]any{"number": bad}).Expect(t, 400)
			var body struct {
				Fields map[string]string `json:"fields"`
			}
			r.JSON(t, &body)
			if !strings.HasPrefix(body.Fields["number"], "must be a phone number in international E.164 form") {
				t.Errorf("DID %q: %s", bad, r.Body)
			}
		}
		n := rand.IntN(10000) // distinct per run on a shared database
		spaced := fmt.Sprintf("+27 (21) 555-%04d", n)
		want := fmt.Sprintf("+2721555%04d", n)
		rec := s.Do(t, "POST", "/api/dids/", s.Key, map[string]any{"number": spaced}).Expect(t, 201).Map(t)
		if rec["number"] != want {
			t.Errorf("DID %q stored as %v, want %s", spaced, rec["number"], want)
		}
		tenant := s.Tenant(t, "phones")
		ext := s.Do(t, "POST", "/api/tenants/"+tenant+"/extensions/", s.Key,
			map[string]any{"name": "1001", "mobile": "+44 (20) 7946-0018"}).Expect(t, 201).Map(t)
		if ext["mobile"] != "+442079460018" {
			t.Errorf("mobile stored as %v, want +442079460018", ext["mobile"])
		}
	})
}

func TestBadParentOnUpdateIs400NamingTheField(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "depts")
		base := "/api/tenants/" + tenant + "/departments/"
		d := s.Do(t, "POST", base, s.Key, map[string]any{"name": "Sales"}).Expect(t, 201).Map(t)
		id := fmt.Sprint(d["id"])
		r := s.Do(t, "PUT", base+id, s.Key, map[string]any{"parent_id": 99999}).Expect(t, 400)
		var body struct {
			Code   string            `json:"code"`
			Fields map[string]string `json:"fields"`
		}
		r.JSON(t, &body)
		if body.Code != "validation_failed" || !strings.Contains(body.Fields["parent_id"], "99999") {
			t.Errorf("body %s", r.Body)
		}
		if got := s.Do(t, "GET", base+id, s.Key, nil).Expect(t, 200).Map(t); got["parent_id"] != nil {
			t.Errorf("the refused change was stored: %v", got)
		}
	})
}

// TestNationalPhoneNumbersReadWithTheTenantsCountry: with the tenant's
// country set, an extension's mobile may be written as a national number
// and is answered (and stored) in E.164; an invalid one, or a national one
// while the tenant has no country, answers 400 naming the field and
// changes nothing.
func TestNationalPhoneNumbersReadWithTheTenantsCountry(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "natl")
		base := "/api/tenants/" + tenant + "/extensions/"
		fieldError := func(r *apptest.Response) string {
			var body struct {
				Code   string            `json:"code"`
				Fields map[string]string `json:"fields"`
			}
			r.JSON(t, &body)
			if body.Code != "validation_failed" {
				t.Errorf("code %q", body.Code)
			}
			return body.Fields["mobile"]
		}
		r := s.Do(t, "POST", base, s.Key, map[string]any{"name": "1001", "mobile": "011 555 0000"}).Expect(t, 400)
		if msg := fieldError(r); !strings.Contains(msg, "national number needs the tenant's country") {
			t.Errorf("without a country: mobile %q", msg)
		}
		s.Do(t, "PUT", "/api/tenants/"+tenant, s.Key, map[string]any{"country": "ZA"}).Expect(t, 200)
		ext := s.Do(t, "POST", base, s.Key, map[string]any{"name": "1001", "mobile": "011 555 0000"}).Expect(t, 201).Map(t)
		if ext["mobile"] != "+27115550000" {
			t.Errorf("mobile answered as %v, want +27115550000", ext["mobile"])
		}
		r = s.Do(t, "PUT", base+"1001", s.Key, map[string]any{"mobile": "0015550000"}).Expect(t, 400)
		if msg := fieldError(r); !strings.Contains(msg, "national number of ZA") {
			t.Errorf("invalid national number: mobile %q", msg)
		}
		if got := s.Do(t, "GET", base+"1001", s.Key, nil).Expect(t, 200).Map(t); got["mobile"] != "+27115550000" {
			t.Errorf("after the refused change: mobile %v", got["mobile"])
		}
	})
}

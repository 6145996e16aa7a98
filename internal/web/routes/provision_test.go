package routes_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
)

// randomMAC is a MAC no other test uses (MACs are unique platform-wide
// and the MariaDB test database is shared).
func randomMAC(t *testing.T) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b[:])
}

// provisionGolden compares a served file with testdata/provision/<name>,
// where TENANT and MAC stand for the test's tenant and device.
func provisionGolden(t *testing.T, name, tenant, mac string, got []byte) {
	t.Helper()
	want, err := os.ReadFile("testdata/provision/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.NewReplacer("TENANT", tenant, "MAC", mac).Replace(string(want)); string(got) != w {
		t.Errorf("%s:\n got:\n%s\nwant:\n%s", name, got, w)
	}
}

// TestProvisioningFiles: a Yealink and a Poly phone fetch their files by
// MAC with their own provisioning credentials; each file carries only the
// device's own lines; no credentials, another device's credentials, an
// administrator's or an API key are refused; an unknown MAC is 404; a
// display name cannot add keys; secrets stay out of the log.
func TestProvisioningFiles(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "prov")
		base := "/api/tenants/" + tenant
		ymac, pmac := randomMAC(t), randomMAC(t)
		sep := strings.ToUpper(strings.Join([]string{ymac[0:2], ymac[2:4], ymac[4:6], ymac[6:8], ymac[8:10], ymac[10:12]}, ":"))
		s.Do(t, "POST", base+"/extensions/", s.Key, map[string]any{"name": "1001", "first_name": "Ann", "last_name": "Smith", "sip_secret": "sip-secret-1001"}).Expect(t, 201)
		s.Do(t, "POST", base+"/extensions/", s.Key, map[string]any{"name": "1002", "first_name": "Front", "last_name": "Desk", "sip_secret": "sip-secret-1002"}).Expect(t, 201)
		s.Do(t, "POST", base+"/extensions/", s.Key, map[string]any{"name": "1003", "first_name": `Eve" reg.2.server.1.address="evil.example`, "last_name": "x'/><reg reg.9.address='y", "sip_secret": "sip-secret-1003"}).Expect(t, 201)
		yealink := s.Do(t, "POST", base+"/devices/", s.Key, map[string]any{
			"mac_address": sep, "vendor": "yealink", "model": "T54W", "provisioning_password": "yealink-prov-pass",
			"device_lines": []any{map[string]any{"line": 1, "extension": "1001", "label": "Ann"}},
			"device_keys":  []any{map[string]any{"position": 1, "type": "blf", "value": "1002", "label": "Desk"}},
		}).Expect(t, 201).Map(t)
		if yealink["mac_address"] != ymac {
			t.Fatalf("MAC stored as %v", yealink["mac_address"])
		}
		s.Do(t, "POST", base+"/devices/", s.Key, map[string]any{
			"mac_address": strings.ToUpper(pmac), "vendor": "polycom", "model": "VVX 450", "provisioning_username": "poly450", "provisioning_password": "polycom-prov-pass",
			"device_lines": []any{map[string]any{"line": 1, "extension": "1002", "shared": true}, map[string]any{"line": 2, "extension": "1003"}},
			"device_keys":  []any{map[string]any{"position": 1, "type": "blf", "value": "1001", "label": "Ann"}},
		}).Expect(t, 201)

		yl := basicAuth(ymac, "yealink-prov-pass")
		r := s.DoHeaders(t, "GET", "/provision/"+ymac+".cfg", yl, nil).Expect(t, 200)
		provisionGolden(t, "yealink.cfg", tenant, ymac, r.Body)
		if r.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("Cache-Control %q", r.Header.Get("Cache-Control"))
		}
		// The MAC may come with separators and in upper case.
		r2 := s.DoHeaders(t, "GET", "/provision/"+strings.ReplaceAll(sep, ":", "-")+".cfg", yl, nil).Expect(t, 200)
		if string(r2.Body) != string(r.Body) {
			t.Errorf("separated MAC served another file")
		}
		poly := basicAuth("poly450", "polycom-prov-pass")
		provisionGolden(t, "polycom-master.cfg", tenant, pmac, s.DoHeaders(t, "GET", "/provision/"+pmac+".cfg", poly, nil).Expect(t, 200).Body)
		phone := s.DoHeaders(t, "GET", "/provision/"+pmac+"-phone.cfg", poly, nil).Expect(t, 200)
		provisionGolden(t, "polycom-phone.cfg", tenant, pmac, phone.Body)
		if strings.Contains(string(phone.Body), "sip-secret-1001") || strings.Contains(string(r.Body), "sip-secret-1002") {
			t.Errorf("a device got another device's line")
		}
		// Quotes in a name stay inside its attribute: the file parses with
		// line 2's server and name as set, and no reg.9.
		var cfg struct {
			Reg struct {
				Attrs []xml.Attr `xml:",any,attr"`
			} `xml:"reg"`
		}
		if err := xml.Unmarshal(phone.Body, &cfg); err != nil {
			t.Fatalf("phone file does not parse: %v", err)
		}
		attrs := map[string]string{}
		for _, a := range cfg.Reg.Attrs {
			attrs[a.Name.Local] = a.Value
		}
		if attrs["reg.2.server.1.address"] != "sip.test" || attrs["reg.2.displayName"] != `Eve" reg.2.server.1.address="evil.example x'/><reg reg.9.address='y` || attrs["reg.9.address"] != "" {
			t.Errorf("a display name changed the registrations: %v", attrs)
		}
		// Yealink has no -phone.cfg.
		s.DoHeaders(t, "GET", "/provision/"+ymac+"-phone.cfg", yl, nil).Expect(t, 404)

		// Refused: no credentials (challenge), a wrong password, another
		// device's credentials, an administrator's API key.
		r = s.DoHeaders(t, "GET", "/provision/"+ymac+".cfg", nil, nil).Expect(t, 401)
		if !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("no Basic challenge: %q", r.Header.Get("WWW-Authenticate"))
		}
		s.DoHeaders(t, "GET", "/provision/"+ymac+".cfg", basicAuth(ymac, "wrong-password"), nil).Expect(t, 401)
		s.DoHeaders(t, "GET", "/provision/"+ymac+".cfg", poly, nil).Expect(t, 401)
		s.DoHeaders(t, "GET", "/provision/"+pmac+"-phone.cfg", yl, nil).Expect(t, 401)
		s.DoHeaders(t, "GET", "/provision/"+ymac+".cfg", map[string]string{"X-API-Key": s.Key}, nil).Expect(t, 401)
		// Unknown MAC, or not a MAC at all.
		s.DoHeaders(t, "GET", "/provision/"+randomMAC(t)+".cfg", yl, nil).Expect(t, 404)
		s.DoHeaders(t, "GET", "/provision/y000000000104.cfg", yl, nil).Expect(t, 404)

		// The download is noted on the device.
		dev := base + "/devices/" + fmt.Sprint(yealink["id"])
		got := s.Do(t, "GET", dev, s.Key, nil).Expect(t, 200).Map(t)
		if got["last_provisioned_at"] == nil || !strings.HasPrefix(fmt.Sprint(got["last_provisioned_ip"]), "127.") || got["last_user_agent"] == nil {
			t.Errorf("download not noted: %v", got)
		}
		if _, shown := got["provisioning_password"]; shown {
			t.Errorf("provisioning password readable: %v", got)
		}
		// A disabled device gets nothing.
		s.Do(t, "PUT", dev, s.Key, map[string]any{"enabled": false}).Expect(t, 200)
		s.DoHeaders(t, "GET", "/provision/"+ymac+".cfg", yl, nil).Expect(t, 404)
		for _, secret := range []string{"yealink-prov-pass", "polycom-prov-pass", "sip-secret-1001", "sip-secret-1002"} {
			if strings.Contains(s.Logs.String(), secret) {
				t.Errorf("the log holds %s", secret)
			}
		}
	})
}

// TestProvisioningFailuresAreLimited: unknown MACs and wrong passwords
// count as failed authentications of the address, so MACs and passwords
// cannot be guessed at speed.
func TestProvisioningFailuresAreLimited(t *testing.T) {
	apptest.Each(t, map[string]string{"SWITCHBOARD_AUTH_FAILURE_LIMIT": "3"}, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "provlim")
		mac := randomMAC(t)
		s.Do(t, "POST", "/api/tenants/"+tenant+"/devices/", s.Key, map[string]any{"mac_address": mac, "vendor": "yealink", "provisioning_password": "the-right-password"}).Expect(t, 201)
		for range 3 {
			s.DoHeaders(t, "GET", "/provision/"+randomMAC(t)+".cfg", basicAuth("x", "y"), nil).Expect(t, 404)
		}
		s.DoHeaders(t, "GET", "/provision/"+randomMAC(t)+".cfg", basicAuth("x", "y"), nil).Expect(t, 429)
		s.DoHeaders(t, "GET", "/provision/"+mac+".cfg", basicAuth(mac, "the-right-password"), nil).Expect(t, 429)
	})
}

package routes_test

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/comms/fax/faxtest"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
)

var hangupHook = regexp.MustCompile(`data="api_hangup_hook=http_put (\S+) (\S+)"`)

// faxUploadPath fetches the dialplan of a call to the tenant's fax number
// through /fs/xml, as FreeSWITCH does, and returns the path and query of
// the upload URL its hangup hook PUTs the fax to, and the node's file.
func faxUploadPath(t *testing.T, s *apptest.Server, tenant, number, call string) (string, string) {
	t.Helper()
	body := fakefs.FormWith(xmlCapture(t, "011-dialplan-2000.http"), "Hunt-Context", tenant, "Caller-Context", tenant,
		"Hunt-Destination-Number", number, "Caller-Destination-Number", number, "Unique-ID", call)
	doc := string(s.DoHeaders(t, "POST", "/fs/xml", map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Authorization": basic("fs", "node-secret")}, body).Expect(t, 200).Body)
	m := hangupHook.FindStringSubmatch(doc)
	if m == nil || !strings.Contains(doc, `application="rxfax" data="`+m[2]+`"`) || !strings.HasSuffix(m[2], "/"+tenant+"/fax/"+call+".tif") {
		t.Fatalf("no fax upload in the dialplan:\n%s", doc)
	}
	u, err := url.Parse(strings.ReplaceAll(m[1], "&amp;", "&"))
	if err != nil {
		t.Fatal(err)
	}
	return u.RequestURI(), m[2]
}

// TestFaxUploadAuthLimitsAndEmail: the upload URL rendered into the fax
// call's hangup hook is the only credential (none, a wrong signature, or
// another call's or tenant's signature is 401); a body over the limit is
// 413 and one that is not a TIFF 415, storing nothing; the fax is stored,
// e-mailed once to the endpoint's fax_email with the TIFF attached, and a
// repeated upload answers 200 without a second e-mail. /readyz says
// e-mail delivery is on.
func TestFaxUploadAuthLimitsAndEmail(t *testing.T) {
	relay := faxtest.Start(t, "127.0.0.1:0")
	env := map[string]string{
		"SWITCHBOARD_XMLCURL_USER": "fs", "SWITCHBOARD_XMLCURL_PASSWORD": "node-secret",
		"SWITCHBOARD_SMTP_URL": relay.URL(), "SWITCHBOARD_SMTP_FROM": "pbx@example.com", "SWITCHBOARD_FAX_MAX_BYTES": "65536",
	}
	apptest.EachSerial(t, env, func(t *testing.T, s *apptest.Server) {
		sent := len(relay.Mails())
		tenant, other := s.Tenant(t, "faxa"), s.Tenant(t, "faxb")
		for i, tn := range []string{tenant, other} {
			s.Do(t, "POST", "/api/tenants/"+tn+"/special_endpoints/", s.Key, map[string]any{
				"name": "Fax", "number": "957", "kind": "application", "application": "fax_to_email", "fax_email": fmt.Sprintf("office%d@example.com", i)}).Expect(t, 201)
		}
		call := faxtest.CallUUID()
		path, _ := faxUploadPath(t, s, tenant, "957", call)
		otherPath, _ := faxUploadPath(t, s, other, "957", faxtest.CallUUID())
		// Rendered per call, never from a cache: the next call of the same
		// number gets its own URL.
		if next := faxtest.CallUUID(); !strings.Contains(func() string { p, _ := faxUploadPath(t, s, tenant, "957", next); return p }(), next) {
			t.Fatal("a second call got the first call's upload URL")
		}
		bare, _, _ := strings.Cut(path, "?")
		_, sig, _ := strings.Cut(path, "?sig=")
		tiff := faxtest.TIFF(2, false, 3000)
		put := func(p string, body []byte) *apptest.Response {
			return s.DoHeaders(t, "PUT", p, map[string]string{"Content-Type": "image/tiff"}, body)
		}
		for name, p := range map[string]string{
			"no signature":            bare,
			"wrong signature":         bare + "?sig=" + strings.Repeat("0", len(sig)),
			"another call's":          strings.Replace(path, call, faxtest.CallUUID(), 1),
			"another tenant's path":   strings.Replace(otherPath, "/"+other+"/", "/"+tenant+"/", 1),
			"signature moved tenants": strings.Replace(path, "/"+tenant+"/", "/"+other+"/", 1),
		} {
			if r := put(p, tiff).Expect(t, 401); r.Code(t) != "unauthorized" {
				t.Errorf("%s: %s", name, r.Body)
			}
		}
		if r := put(path, append(tiff, make([]byte, 70000)...)).Expect(t, 413); r.Code(t) == "" {
			t.Errorf("413 without a JSON code: %s", r.Body)
		}
		if r := put(path, []byte("%PDF-1.4\n1 0 obj\n")).Expect(t, 415); r.Code(t) != "unsupported_media_type" {
			t.Errorf("PDF: %s", r.Body)
		}
		faxDir := filepath.Join(s.Cfg.Media.Dir, tenant, "fax")
		if _, err := os.Stat(faxDir); !os.IsNotExist(err) {
			t.Fatalf("refused uploads left files: %v", err)
		}
		if n := len(relay.Mails()); n != sent {
			t.Fatalf("refused uploads sent %d e-mails", n-sent)
		}

		got := put(path, tiff).Expect(t, 201).Map(t)
		if got["pages"] != 2.0 || got["call_uuid"] != call || got["size_bytes"] != float64(len(tiff)) {
			t.Fatalf("created %v", got)
		}
		stored, err := os.ReadFile(filepath.Join(faxDir, "received", call+".tif"))
		if err != nil || !bytes.Equal(stored, tiff) {
			t.Fatalf("stored fax: %v", err)
		}
		mails := relay.Wait(t, sent+1, 15*time.Second)
		m := mails[sent]
		if len(m.To) != 1 || m.To[0] != "office0@example.com" || m.From != "pbx@example.com" || !bytes.Contains(m.Data, []byte("Content-Type: image/tiff")) {
			t.Fatalf("e-mail from %s to %v:\n%.600s", m.From, m.To, m.Data)
		}
		if r := put(path, tiff).Expect(t, 200).Map(t); r["id"] != got["id"] {
			t.Fatalf("repeat answered %v", r)
		}
		time.Sleep(1500 * time.Millisecond) // a wrong second e-mail would be sent by now
		if n := len(relay.Mails()); n != sent+1 {
			t.Fatalf("%d e-mails for one fax", n-sent)
		}
		ready := s.Do(t, "GET", "/readyz", "", nil).Expect(t, 200).Map(t)
		if ready["checks"].(map[string]any)["fax_email"] != "on" {
			t.Fatalf("readyz %v", ready)
		}
	})
}

// TestFaxEmailOffReadiness: without SWITCHBOARD_SMTP_URL /readyz says
// e-mail delivery is off (and stays ready).
func TestFaxEmailOffReadiness(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		ready := s.Do(t, "GET", "/readyz", "", nil).Expect(t, 200).Map(t)
		if state, _ := ready["checks"].(map[string]any)["fax_email"].(string); !strings.HasPrefix(state, "off") {
			t.Fatalf("readyz %v", ready)
		}
	})
}

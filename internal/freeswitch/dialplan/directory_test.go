package dialplan

import (
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

// dirRequest turns a directory capture into a request for our domain.
func dirRequest(t *testing.T, c string, kv ...string) xmlcurl.Request {
	t.Helper()
	base := []string{"key_value", testDomain, "domain", testDomain, "user", "1001-acme"}
	return xmlcurl.ParseRequest(fakefs.FormWith(capture(t, c), append(base, kv...)...))
}

func TestDirectoryGolden(t *testing.T) {
	snap := loadSnap(t)
	tests := []struct {
		name string
		req  xmlcurl.Request
	}{
		{"dir_sip_auth_register", dirRequest(t, "009")},
		{"dir_sip_auth_invite", dirRequest(t, "010")},
		{"dir_user_call", dirRequest(t, "014")},
		{"dir_no_action", dirRequest(t, "013")},
		{"dir_message_count", dirRequest(t, "013", "action", "message-count", "Event-Name", "GENERAL")},
		{"dir_reverse_auth_lookup", dirRequest(t, "013", "action", "reverse-auth-lookup")},
		{"dir_group_call", dirRequest(t, "013", "user", "", "action", "group_call", "group", "acme", "group_name", "acme")},
		{"dir_domain_gateways", dirRequest(t, "013", "user", "", "key", "", "purpose", "gateways", "profile", "external")},
		{"dir_special_mailbox", dirRequest(t, "009", "user", "800-acme")},
		{"dir_extension_without_voicemail", dirRequest(t, "009", "user", "1002-acme")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := Directory(testOpts, tt.req, snap)
			wellFormed(t, doc)
			if xmldoc.IsNotFound(doc) {
				t.Fatalf("got not found")
			}
			golden(t, tt.name+".xml", doc)
		})
	}
}

func TestDirectoryA1Hash(t *testing.T) {
	doc := Directory(testOpts, dirRequest(t, "009"), loadSnap(t))
	got := decodeTree(t, doc).find("param", "name", "a1-hash", "value")
	// md5("1001-acme:sb.example:s3cret-Alice-123"), computed independently.
	const want = "29cbc48b56e2f6bdb714a1cf8551de5d"
	if len(got) != 1 || got[0] != want {
		t.Fatalf("a1-hash = %v", got)
	}
	if strings.Contains(string(doc), "s3cret-Alice-123") {
		t.Fatal("clear SIP secret in a sip_auth document")
	}
}

func TestDirectoryNotFound(t *testing.T) {
	snap := loadSnap(t)
	disabled := loadSnap(t)
	disabled.Tenant.Enabled = false
	tests := []struct {
		name string
		req  xmlcurl.Request
		snap *TenantSnapshot
	}{
		{"capture as is: bare user id", xmlcurl.ParseRequest(capture(t, "009")), snap},
		{"unknown extension", dirRequest(t, "009", "user", "1999-acme"), snap},
		{"disabled extension", dirRequest(t, "009", "user", "1009-acme"), snap},
		{"disabled tenant", dirRequest(t, "009"), disabled},
		{"other tenant's snapshot", dirRequest(t, "009", "user", "1001-other"), snap},
		{"other domain", dirRequest(t, "009", "domain", "evil.example", "key_value", "evil.example"), snap},
		{"no snapshot", dirRequest(t, "009"), nil},
		{"group of another tenant", dirRequest(t, "013", "user", "", "action", "group_call", "group", "other"), snap},
		{"mailbox reverse auth", dirRequest(t, "013", "user", "800-acme", "action", "reverse-auth-lookup"), snap},
		{"unknown key", dirRequest(t, "013", "key", "mailbox"), snap},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := Directory(testOpts, tt.req, tt.snap)
			if !xmldoc.IsNotFound(doc) {
				t.Fatalf("want not found, got\n%s", doc)
			}
		})
	}
	golden(t, "not_found.xml", xmldoc.NotFound())
}

func TestDirectoryInjection(t *testing.T) {
	snap := loadSnap(t)
	const evil = `Eve "<x>" & $${default_password} ${system(id)}`
	x := snap.extension("1001")
	x.FirstName, x.LastName, x.CallerID = evil, "O'Neil", ""
	x.SIPSecret = `pa$${default_password}"<&>'`
	x.AccountCode = "${system(id)}"
	x.VoicemailEmail = "a${b}@x.example"
	snap.Tenant.OutboundCallerIDName = evil
	doc := Directory(testOpts, dirRequest(t, "013", "action", "reverse-auth-lookup"), snap)
	wellFormed(t, doc)
	golden(t, "dir_injection.xml", doc)
	if strings.Contains(string(doc), "$") {
		t.Fatal("a raw '$' reached the document: the preprocessor would expand $${...}")
	}
	tree := decodeTree(t, doc)
	if got := tree.find("param", "name", "reverse-auth-pass", "value"); len(got) != 1 || got[0] != x.SIPSecret {
		t.Fatalf("secret not carried intact: %q", got)
	}
	name := tree.find("variable", "name", "effective_caller_id_name", "value")
	// Carried intact except the dollars that would start an expansion.
	if len(name) != 1 || name[0] != `Eve "<x>" & {default_password} {system(id)} O'Neil` {
		t.Fatalf("effective_caller_id_name = %q", name)
	}
	if got := tree.find("variable", "name", "outbound_caller_id_name", "value"); len(got) != 1 || strings.Contains(got[0], "${") {
		t.Fatalf("outbound_caller_id_name = %q", got)
	}
	if got := tree.find("variable", "name", "accountcode", "value"); len(got) != 0 {
		t.Fatalf("invalid accountcode rendered: %q", got)
	}
	if got := tree.find("param", "name", "vm-mailto", "value"); len(got) != 0 {
		t.Fatalf("invalid email rendered: %q", got)
	}
}

// TestDialStringLetsTheCalleeLegTranscode: every user/ leg carries
// media_mix_inbound_outbound_codecs=true, parsed as FreeSWITCH parses the
// dial string's {} block, or it offers only the caller's codec and a
// PCMA-only caller to a phone answering PCMU fails INCOMPATIBLE_DESTINATION.
func TestDialStringLetsTheCalleeLegTranscode(t *testing.T) {
	doc := string(Directory(testOpts, dirRequest(t, "014"), loadSnap(t)))
	_, rest, ok := strings.Cut(doc, `<param name="dial-string" value="`)
	if !ok {
		t.Fatalf("no dial-string:\n%s", doc)
	}
	value, _, _ := strings.Cut(rest, `"`)
	vars, _, ok := fakefs.ParseDialString(strings.ReplaceAll(value, "&#36;", "$"))
	if !ok {
		t.Fatalf("dial string %q does not parse", value)
	}
	got := map[string]string{}
	for _, h := range vars {
		got[h.Name] = h.Value
	}
	if got["media_mix_inbound_outbound_codecs"] != "true" || got["sip_invite_domain"] != "${dialed_domain}" {
		t.Errorf("dial string variables %v", got)
	}
}

package fakefs

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVoicemailAPI: the fake's mod_voicemail answers vm_inject, vm_list and
// vm_read as mod_voicemail.c does: the box is looked up through
// mod_xml_curl (purpose publish-vm), the file copied into the user's
// vm-storage-dir as msg_<uuid>_broadcast_<name>, single quotes group an
// argument; an unknown box is "Error: <usage>", an unreadable file is
// +OK with nothing filed.
func TestVoicemailAPI(t *testing.T) {
	store := t.TempDir()
	var purposes []string
	xmlcurl := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		switch {
		case form.Get("key_value") == "voicemail.conf":
			_, _ = io.WriteString(w, `<document type="freeswitch/xml"><section name="configuration"><configuration name="voicemail.conf"><profiles>`+
				`<profile name="default"><param name="file-extension" value="wav"/></profile></profiles></configuration></section></document>`)
		case form.Get("section") == "directory" && form.Get("user") == "1001-acme":
			purposes = append(purposes, form.Get("purpose"))
			_, _ = io.WriteString(w, `<document type="freeswitch/xml"><section name="directory"><domain name="sip.test"><groups><group name="acme"><users>`+
				`<user id="1001-acme"><params><param name="vm-storage-dir" value="`+store+`/acme/voicemail/1001"/></params></user>`+
				`</users></group></groups></domain></section></document>`)
		default:
			_, _ = io.WriteString(w, `<document type="freeswitch/xml"><section name="result"><result status="not found"/></section></document>`)
		}
	}))
	defer xmlcurl.Close()
	src := filepath.Join(t.TempDir(), "abc123.wav")
	wav := append([]byte("RIFF\x00\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x80\x3e\x00\x00\x02\x00\x10\x00data\x00\x00\x00\x00"), make([]byte, 32000)...)
	if err := os.WriteFile(src, wav, 0o644); err != nil {
		t.Fatal(err)
	}
	s := startFake(t, Options{XMLCurlURL: xmlcurl.URL})
	rc := dialRaw(t, s.Addr())
	rc.auth()
	usage := "Error: " + vmInjectUsage + "\n"
	for _, tt := range []struct{ cmd, want string }{
		{"vm_inject 1001-acme@sip.test", usage},
		{"vm_inject 1002-acme@sip.test " + src, usage},
		{"vm_inject group=acme@sip.test " + src, usage},
		{"vm_list 1001-acme", vmNoProfile},
		{"vm_inject 1001-acme@sip.test@default " + src + ".missing 0825550001", "+OK\n"},
		{"vm_list 1001-acme@sip.test", ""},
		{"vm_inject 1001-acme@sip.test@default " + src + " 0825550001 'Ann Smith'", "+OK\n"},
		{"vm_read 1001-acme@sip.test maybe", vmNoProfile},
	} {
		if got := rc.api(tt.cmd); got != tt.want {
			t.Errorf("api %s = %q, want %q", tt.cmd, got, tt.want)
		}
	}
	msgs := s.VoicemailMessages()
	if len(msgs) != 1 {
		t.Fatalf("messages %+v", msgs)
	}
	m := msgs[0]
	if m.CIDName != "Ann Smith" || m.CIDNumber != "0825550001" || m.Seconds != 2 || m.Folder != "inbox" ||
		!strings.HasPrefix(m.Path, store+"/acme/voicemail/1001/msg_"+m.UUID+"_broadcast_abc123.wav") {
		t.Fatalf("message %+v", m)
	}
	if _, err := os.Stat(m.Path); err != nil {
		t.Fatalf("copied file: %v", err)
	}
	list := rc.api("vm_list 1001-acme@sip.test")
	if f := strings.Split(strings.TrimSpace(list), ":"); len(f) != 10 || f[1] != "0" || f[5] != m.Path || f[6] != m.UUID || f[7] != "Ann Smith" {
		t.Fatalf("vm_list %q", list)
	}
	if got := rc.api("vm_read 1001-acme@sip.test read " + m.UUID); got != "+OK\n" || s.VoicemailMessages()[0].ReadEpoch == 0 {
		t.Fatalf("vm_read %q %+v", got, s.VoicemailMessages())
	}
	if len(purposes) == 0 || purposes[0] != "publish-vm" {
		t.Errorf("directory purposes %q", purposes)
	}
	if got := splitBlank(`a  'b c' d\ e x\sy\'z 'f g`, 6); strings.Join(got, "|") != `a|b c|d\ e|x y'z|'f g` {
		t.Errorf("splitBlank %q", got)
	}
}

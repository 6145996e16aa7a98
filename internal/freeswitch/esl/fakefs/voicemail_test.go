package fakefs

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"net/textproto"
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
	rc := dialAuthed(t, s.Addr())
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

// TestVoicemailMessageWaitingAndSendevent: filing and reading a message
// fire mod_voicemail's MESSAGE_WAITING for the box (new/saved counts);
// "sendevent MESSAGE_WAITING" is answered "+OK <Event-UUID>", recorded and
// fired to subscribers with its headers; an unknown event name is answered
// the same but reaches no listener of that name.
func TestVoicemailMessageWaitingAndSendevent(t *testing.T) {
	store := t.TempDir()
	xmlcurl := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		switch {
		case form.Get("key_value") == "voicemail.conf":
			_, _ = io.WriteString(w, `<document type="freeswitch/xml"><section name="configuration"><configuration name="voicemail.conf"><profiles>`+
				`<profile name="default"><param name="file-extension" value="wav"/></profile></profiles></configuration></section></document>`)
		default:
			_, _ = io.WriteString(w, `<document type="freeswitch/xml"><section name="directory"><domain name="sip.test"><groups><group name="acme"><users>`+
				`<user id="820-acme"><params><param name="vm-storage-dir" value="`+store+`/acme/voicemail/820"/></params></user>`+
				`</users></group></groups></domain></section></document>`)
		}
	}))
	defer xmlcurl.Close()
	src := filepath.Join(t.TempDir(), "m.wav")
	if err := os.WriteFile(src, []byte("RIFF\x00\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x80\x3e\x00\x00\x02\x00\x10\x00data\x00\x00\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startFake(t, Options{XMLCurlURL: xmlcurl.URL})
	// Plain event values are URL-encoded.
	get := func(h textproto.MIMEHeader, name string) string {
		v, err := url.QueryUnescape(h.Get(name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return v
	}
	rc := dialAuthed(t, s.Addr())
	if got := rc.command("event plain MESSAGE_WAITING"); !strings.HasPrefix(got, "+OK") {
		t.Fatalf("subscribe %q", got)
	}
	for _, want := range []string{"1/0", "2/0"} {
		if got := rc.api("vm_inject 820-acme@sip.test@default " + src); got != "+OK\n" {
			t.Fatalf("vm_inject %q", got)
		}
		h, _ := rc.event()
		if h.Get("Event-Name") != "MESSAGE_WAITING" || get(h, "Mwi-Message-Account") != "820-acme@sip.test" ||
			h.Get("Mwi-Messages-Waiting") != "yes" || h.Get("Mwi-Voice-Message") != want || h.Get("Update-Reason") != "NEW" {
			t.Fatalf("event %v, want counts %s", h, want)
		}
	}
	if got := rc.api("vm_read 820-acme@sip.test read"); got != "+OK\n" {
		t.Fatalf("vm_read %q", got)
	}
	if h, _ := rc.event(); h.Get("Mwi-Messages-Waiting") != "no" || h.Get("Mwi-Voice-Message") != "0/2" || h.Get("Update-Reason") != "READ" {
		t.Fatalf("after read %v", h)
	}

	rc.send("sendevent MESSAGE_WAITING\r\nMWI-Messages-Waiting: yes\r\nMWI-Message-Account: 1001-acme@sip.test\r\nMWI-Voice-Message: 2/0\r\n\r\n")
	// The fired event and the reply, in either order.
	reply, body := rc.frame()
	ev, evBody := reply, body
	if reply.Get("Content-Type") != "command/reply" {
		reply, _ = rc.frame()
	} else {
		ev, evBody = rc.frame()
	}
	if eh, _ := textproto.NewReader(bufio.NewReader(strings.NewReader(evBody))).ReadMIMEHeader(); ev.Get("Content-Type") != "text/event-plain" ||
		eh.Get("Event-Name") != "MESSAGE_WAITING" || get(eh, "Mwi-Message-Account") != "1001-acme@sip.test" || eh.Get("Mwi-Voice-Message") != "2/0" {
		t.Fatalf("fired event %v %q", ev, evBody)
	}
	if !strings.HasPrefix(reply.Get("Reply-Text"), "+OK ") || len(reply.Get("Reply-Text")) != len("+OK ")+36 {
		t.Fatalf("sendevent reply %v", reply)
	}
	sent := s.SentEvents()
	if len(sent) != 1 || !sent[0].Known || sent[0].Get("mwi-message-account") != "1001-acme@sip.test" {
		t.Fatalf("sent %+v", sent)
	}
	if got := rc.command("sendevent NOT_AN_EVENT\r\nX: y\r\n"); !strings.HasPrefix(got, "+OK ") {
		t.Fatalf("unknown sendevent %q", got)
	}
	if sent := s.SentEvents(); len(sent) != 2 || sent[1].Known {
		t.Fatalf("sent %+v", sent)
	}
}

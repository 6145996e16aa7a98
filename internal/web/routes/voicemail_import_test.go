package routes_test

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
	"github.com/switchboard/switchboard/internal/media/mediatest"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

func voicemailBody(id, mailbox, audio string) map[string]any {
	return map[string]any{"external_id": id, "mailbox": mailbox, "audio_base64": audio,
		"when": "2026-03-01T07:30:00Z", "caller_id_name": "Ann O'Neil ${x}", "caller_id_number": "+27825550001"}
}

// TestVoicemailImportReachesMailbox: an imported WAV (JSON) and MP3
// (multipart) are converted into the tenant's media library and filed in
// mod_voicemail on the node with vm_inject, in the box's storage directory,
// with the caller id (nothing expandable), heard when imported as read; a
// repeat is 200 and files nothing more; other content is 409 naming it;
// concurrent repeats make one message; not-audio is 415 with nothing
// stored (oversize: TestAudioOverLimitIsRefusedWithNothingStored); an
// unknown mailbox is 400.
func TestVoicemailImportReachesMailbox(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		e.fs.SetXMLCurlURL(e.URL + "/fs/xml")
		path := "/api/tenants/" + e.tenant + "/imports/voicemail"
		e.Do(t, "POST", "/api/tenants/"+e.tenant+"/special_mailboxes/", e.Key, map[string]any{"name": "Support", "number": "820"}).Expect(t, 201)
		wav := base64.StdEncoding.EncodeToString(mediatest.Tone(t, "vm.wav", 2))
		box := "1001-" + e.tenant
		filed := func(user string, n int) []fakefs.VMMessage {
			t.Helper()
			var out []fakefs.VMMessage
			wait.Until(t, 10*time.Second, "messages filed in "+user, func() bool {
				out = out[:0]
				for _, m := range e.fs.VoicemailMessages() {
					if m.Username == user {
						out = append(out, m)
					}
				}
				return len(out) >= n
			})
			return out
		}

		first := e.Do(t, "POST", path, e.Key, voicemailBody("vm-1", "1001", wav)).Expect(t, 201).Map(t)
		if first["created"] != true || first["mailbox"] != "1001" || first["folder"] != "inbox" || first["source_format"] != "wav" || first["duration"].(float64) != 2 || first["read"] != false {
			t.Fatalf("created %v", first)
		}
		msgs := filed(box, 1)
		m := msgs[0]
		wantDir := e.Cfg.Media.NodeDir + "/" + e.tenant + "/voicemail/1001/"
		if m.Domain != "sip.test" || !strings.HasPrefix(m.Path, wantDir+"msg_") || m.CIDNumber != "+27825550001" || m.CIDName != "Ann ONeil x" || m.ReadEpoch != 0 || m.Seconds != 2 {
			t.Fatalf("filed %+v (want a file in %s)", m, wantDir)
		}
		if st, err := os.Stat(m.Path); err != nil || st.Size() < 44 {
			t.Fatalf("filed file: %v", err)
		}
		if files := filesIn(t, filepath.Join(e.Cfg.Media.Dir, e.tenant, "voicemail-imports")); len(files) != 1 || !strings.HasSuffix(m.Path, "_broadcast_"+files[0]) {
			t.Fatalf("library files %v, filed %s", files, m.Path)
		}

		// A repeat answers the same message and files nothing more.
		again := e.Do(t, "POST", path, e.Key, voicemailBody("vm-1", "1001", wav)).Expect(t, 200).Map(t)
		if again["created"] != false || again["id"] != first["id"] {
			t.Fatalf("repeat %v", again)
		}
		other := voicemailBody("vm-1", "820", wav)
		other["folder"] = "saved"
		conflict(t, e.Do(t, "POST", path, e.Key, other), "vm-1", "mailbox", "folder")
		conflict(t, e.Do(t, "POST", path, e.Key, voicemailBody("vm-1", "1001", base64.StdEncoding.EncodeToString(mediatest.Tone(t, "b.wav", 1)))), "audio")

		// An MP3 in multipart into the special mailbox, imported as heard.
		ct, body := multipartBody(t, map[string]string{"external_id": "vm-2", "mailbox": "820", "read": "true", "caller_id_number": "0215550100"}, mediatest.Tone(t, "vm.mp3", 1))
		mp3 := e.DoHeaders(t, "POST", path, map[string]string{"Content-Type": ct, "X-API-Key": e.Key}, string(body)).Expect(t, 201).Map(t)
		if mp3["source_format"] != "mp3" || mp3["read"] != true {
			t.Fatalf("mp3 %v", mp3)
		}
		var heard fakefs.VMMessage
		wait.Until(t, 10*time.Second, "the mp3 message heard", func() bool {
			for _, m := range e.fs.VoicemailMessages() {
				if m.Username == "820-"+e.tenant && m.ReadEpoch > 0 {
					heard = m
					return true
				}
			}
			return false
		})
		if heard.CIDName != "anonymous" || !strings.HasPrefix(heard.Path, e.Cfg.Media.NodeDir+"/"+e.tenant+"/voicemail/820/") {
			t.Fatalf("heard %+v", heard)
		}

		// Concurrent repeats of a new external_id: one message.
		var wg sync.WaitGroup
		statuses := make([]int, 5)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = e.Do(t, "POST", path, e.Key, voicemailBody("vm-3", "1001", wav)).Status
			}()
		}
		wg.Wait()
		created := 0
		for _, st := range statuses {
			if st == 201 {
				created++
			} else if st != 200 {
				t.Fatalf("concurrent statuses %v", statuses)
			}
		}
		if created != 1 {
			t.Fatalf("concurrent statuses %v: want one 201", statuses)
		}
		filed(box, 2)
		time.Sleep(300 * time.Millisecond) // a redelivery would show by now
		if n := len(filed(box, 2)); n != 2 {
			t.Fatalf("%d messages in %s, want 2", n, box)
		}

		// Refusals store nothing.
		before := filesIn(t, filepath.Join(e.Cfg.Media.Dir, e.tenant, "voicemail-imports"))
		fieldError(t, e.Do(t, "POST", path, e.Key, voicemailBody("vm-4", "1999", wav)), "mailbox", "extension name or special-mailbox number")
		e.Do(t, "POST", path, e.Key, voicemailBody("vm-4", "1001", base64.StdEncoding.EncodeToString([]byte("%PDF-1.4 not audio")))).Expect(t, 415)
		bad := voicemailBody("vm-4", "1001", wav)
		bad["folder"] = "trash"
		fieldError(t, e.Do(t, "POST", path, e.Key, bad), "folder", "inbox, old, saved")
		if after := filesIn(t, filepath.Join(e.Cfg.Media.Dir, e.tenant, "voicemail-imports")); len(after) != len(before) {
			t.Fatalf("refused imports left files: %v -> %v", before, after)
		}
		// Another tenant cannot import into this tenant's boxes.
		other2 := e.Tenant(t, "vmo")
		fieldError(t, e.Do(t, "POST", "/api/tenants/"+other2+"/imports/voicemail", e.Key, voicemailBody("vm-5", "820", wav)), "mailbox", "special-mailbox")
	})
}

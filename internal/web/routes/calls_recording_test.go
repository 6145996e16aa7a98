package routes_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

// fakeWAV stands for the file FreeSWITCH writes: the server serves bytes,
// it does not decode them.
var fakeWAV = []byte("RIFF\x2c\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x80\x3e\x00\x00\x00\x7d\x00\x00\x02\x00\x10\x00data\x08\x00\x00\x00\x01\x02\x03\x04\x05\x06\x07\x08")

// recordedCall records a live call of the env's tenant through the record
// endpoint, writes audio as its file under mount as the node would on the
// shared directory (when mount is set), hangs up and answers the call's
// CDR.
func recordedCall(t *testing.T, e *callEnv, mount, file string, audio []byte) map[string]any {
	t.Helper()
	id, uuid := e.liveChannel(t, e.tenant, "1001")
	r := e.Do(t, "POST", "/api/telephony/record", e.user, map[string]any{"channel": id, "filename": file}).Expect(t, 200).Map(t)
	if want := "/rec/" + e.tenant + "/" + file + ".wav"; r["path"] != want {
		t.Fatalf("record answer %v, want path %s", r, want)
	}
	if mount != "" {
		writeFile(t, filepath.Join(mount, e.tenant, file+".wav"), audio)
	}
	wait.Until(t, 5*time.Second, "channel recording", func() bool {
		return e.Do(t, "GET", "/api/telephony/channels/"+esc(id), e.tenantKey, nil).Expect(t, 200).Map(t)["recording"] == true
	})
	if err := e.fs.Hangup(uuid, "NORMAL_CLEARING"); err != nil {
		t.Fatal(err)
	}
	return e.waitCDR(t, uuid)
}

// waitCDR waits until the tenant's CDR report lists the call with uuid.
func (e *callEnv) waitCDR(t *testing.T, uuid string) map[string]any {
	t.Helper()
	var found map[string]any
	wait.Until(t, 5*time.Second, "cdr of "+uuid, func() bool {
		var list []map[string]any
		e.Do(t, "GET", "/api/reports/cdrs?limit=1000", e.tenantKey, nil).Expect(t, 200).JSON(t, &list)
		for _, c := range list {
			if c["uuid"] == uuid {
				found = c
				return true
			}
		}
		return false
	})
	return found
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A live call recorded with the record endpoint plays from its CDR when
// the server sees the nodes' recordings directory: the report names the
// URL, the file answers whole and by ranges, in the CDR's tenant only.
// Paths a node's event could carry outside the tenant's directory (".."
// climbing out, another tenant's directory, symlinks leaving it) are
// refused, as are files gone.
func TestCDRRecordingServedFromMount(t *testing.T) {
	mount := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.wav")
	writeFile(t, outside, []byte("not yours"))
	eachCallEnvWith(t, map[string]string{"SWITCHBOARD_RECORDINGS_MOUNT": mount}, func(t *testing.T, e *callEnv) {
		cdr := recordedCall(t, e, mount, "meeting-1", fakeWAV)
		path := fmt.Sprintf("/api/tenants/%s/cdrs/%v/recording", e.tenant, cdr["id"])
		if cdr["recording_path"] != "/rec/"+e.tenant+"/meeting-1.wav" || cdr["recording_url"] != e.Cfg.BaseURL+path {
			t.Fatalf("the cdr names recording %v at %v, want %s", cdr["recording_path"], cdr["recording_url"], e.Cfg.BaseURL+path)
		}
		full := e.Do(t, "GET", path, e.tenantKey, nil).Expect(t, 200)
		if string(full.Body) != string(fakeWAV) || full.Header.Get("Content-Type") != "audio/wav" || full.Header.Get("Accept-Ranges") != "bytes" {
			t.Errorf("the recording answers %q (%s, ranges %q)", full.Body, full.Header.Get("Content-Type"), full.Header.Get("Accept-Ranges"))
		}
		part := e.DoHeaders(t, "GET", path, map[string]string{"X-API-Key": e.Key, "Range": "bytes=8-11"}, nil).Expect(t, http.StatusPartialContent)
		if string(part.Body) != "WAVE" || part.Header.Get("Content-Range") != fmt.Sprintf("bytes 8-11/%d", len(fakeWAV)) {
			t.Errorf("range answer %q (%s)", part.Body, part.Header.Get("Content-Range"))
		}

		// Another tenant: its own path does not find the CDR; this one is
		// not its to read.
		other := e.Tenant(t, "othr")
		otherKey := e.KeyFor(t, map[string]any{"tenant": other})
		if r := e.Do(t, "GET", fmt.Sprintf("/api/tenants/%s/cdrs/%v/recording", other, cdr["id"]), otherKey, nil).Expect(t, 404); r.Code(t) != "not_found" {
			t.Errorf("another tenant's path: code %q", r.Code(t))
		}
		e.Do(t, "GET", path, otherKey, nil).Expect(t, 403)
		e.Do(t, "GET", fmt.Sprintf("/api/tenants/%s/cdrs/x/recording", e.tenant), e.tenantKey, nil).Expect(t, 404)

		// Recording paths the tracker could store from a node's event.
		writeFile(t, filepath.Join(mount, other, "theirs.wav"), []byte("their call"))
		if err := os.Symlink(outside, filepath.Join(mount, e.tenant, "escape.wav")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(mount, other, "theirs.wav"), filepath.Join(mount, e.tenant, "sideways.wav")); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(mount, e.tenant, "notes.txt"), []byte("text"))
		cases := []struct{ name, path, code string }{
			{"climbing out with ..", "/rec/" + e.tenant + "/../" + other + "/theirs.wav", "recording_not_reachable"},
			{"another tenant's directory", "/rec/" + other + "/theirs.wav", "recording_not_reachable"},
			{"outside the recordings directory", "/etc/passwd.wav", "recording_not_reachable"},
			{"not audio", "/rec/" + e.tenant + "/notes.txt", "recording_not_reachable"},
			{"a symlink leaving the mount", "/rec/" + e.tenant + "/escape.wav", "recording_not_found"},
			{"a symlink into another tenant's directory", "/rec/" + e.tenant + "/sideways.wav", "recording_not_found"},
			{"a file gone", "/rec/" + e.tenant + "/gone.wav", "recording_not_found"},
			{"no recording", "", "recording_not_found"},
		}
		ctx := context.Background()
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				uuid := storetest.Name("cdr")
				err := e.Store.InsertCDR(ctx, models.CDR{Tenant: e.tenant, ChannelID: "SIP/1001-" + e.tenant + "-00000001", UUID: uuid, Node: "fs-test",
					Direction: "inbound", Extension: "1001", EndedAt: time.Now().UTC(), HangupCause: "NORMAL_CLEARING", RecordingPath: tc.path})
				if err != nil {
					t.Fatal(err)
				}
				c := e.waitCDR(t, uuid)
				if c["recording_path"] != tc.path || c["recording_url"] != nil {
					t.Errorf("listed with recording %v at %v", c["recording_path"], c["recording_url"])
				}
				r := e.Do(t, "GET", fmt.Sprintf("/api/tenants/%s/cdrs/%v/recording", e.tenant, c["id"]), e.tenantKey, nil).Expect(t, 404)
				if r.Code(t) != tc.code || strings.Contains(string(r.Body), "their call") || strings.Contains(string(r.Body), "not yours") {
					t.Errorf("code %q, want %q (%s)", r.Code(t), tc.code, r.Body)
				}
			})
		}
	})
}

// Without SWITCHBOARD_RECORDINGS_MOUNT a recorded call's CDR names its
// file on the node but offers no URL, and the route says why.
func TestCDRRecordingNotReachableWithoutMount(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		cdr := recordedCall(t, e, "", "meeting-2", nil)
		if cdr["recording_path"] != "/rec/"+e.tenant+"/meeting-2.wav" || cdr["recording_url"] != nil {
			t.Errorf("the cdr names recording %v at %v", cdr["recording_path"], cdr["recording_url"])
		}
		r := e.Do(t, "GET", fmt.Sprintf("/api/tenants/%s/cdrs/%v/recording", e.tenant, cdr["id"]), e.tenantKey, nil).Expect(t, 404)
		if r.Code(t) != "recording_not_reachable" || !strings.Contains(string(r.Body), "SWITCHBOARD_RECORDINGS_MOUNT") {
			t.Errorf("answer %s", r.Body)
		}
	})
}

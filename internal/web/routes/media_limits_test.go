package routes_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/media/mediatest"
	"github.com/switchboard/switchboard/internal/models/storetest"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

// silenceFLAC is a FLAC of the given seconds of 8 kHz mono silence, made
// with sox: a few hundred kB that decode to a huge WAV.
func silenceFLAC(t *testing.T, seconds int) []byte {
	t.Helper()
	mediatest.Tone(t, "probe.wav", 1) // skips without sox, as the other media tests
	path := filepath.Join(t.TempDir(), "silence.flac")
	if out, err := exec.Command("sox", "-n", "-r", "8000", "-c", "1", path, "trim", "0", strconv.Itoa(seconds)).CombinedOutput(); err != nil {
		t.Fatalf("sox makes silence: %v %s", err, out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// allFiles lists every file below dir, hidden ones included.
func allFiles(t *testing.T, dir string) []string {
	t.Helper()
	var all []string
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			all = append(all, p)
		}
		return nil
	})
	return all
}

// TestAudioBombIsRefusedWithNothingStored: a small FLAC of three hours of
// silence (it used to become a 345 MB WAV) is refused as a voice prompt
// with 413 audio_too_long (SWITCHBOARD_MEDIA_MAX_PROMPT_DURATION, 10
// minutes by default), and as a music-on-hold file and a recording (under
// SWITCHBOARD_MEDIA_MAX_DURATION, here 4h) with 413 audio_too_large: the
// converted file would pass SWITCHBOARD_MEDIA_MAX_STORED_BYTES. No row,
// no file.
func TestAudioBombIsRefusedWithNothingStored(t *testing.T) {
	apptest.Each(t, map[string]string{"SWITCHBOARD_MEDIA_MAX_STORED_BYTES": "10485760", "SWITCHBOARD_MEDIA_MAX_DURATION": "4h"}, func(t *testing.T, s *apptest.Server) {
		bomb := silenceFLAC(t, 3*3600)
		if len(bomb) > 1<<20 {
			t.Fatalf("the FLAC is %d bytes: not a small upload", len(bomb))
		}
		b64 := base64.StdEncoding.EncodeToString(bomb)
		tenant := s.Tenant(t, "bomb")
		key := s.KeyFor(t, map[string]any{"tenant": tenant, "permissions": []string{"config.read", "config.write"}})
		base := "/api/tenants/" + tenant + "/voice_prompts/"
		start := time.Now()
		r := s.Do(t, "POST", base, key, map[string]any{"name": "bomb", "audio_base64": b64}).Expect(t, 413)
		if r.Code(t) != "audio_too_long" || !strings.Contains(r.Map(t)["error"].(string), "10m") {
			t.Fatalf("413 %s", r.Body)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("refusing took %s: the audio was converted before it was refused", d)
		}
		s.Do(t, "GET", base, key, nil).Expect(t, 200).ExpectHeader(t, "X-Total-Count", "0")

		_, filesPath := mohClass(t, s, tenant, "bomb")
		r = s.Do(t, "POST", filesPath, key, map[string]any{"external_id": "bomb-1", "audio_base64": b64}).Expect(t, 413)
		if r.Code(t) != "audio_too_large" {
			t.Fatalf("music on hold: 413 %s", r.Body)
		}
		r = s.Do(t, "POST", "/api/tenants/"+tenant+"/recordedcalls", key, recordingBody("bomb-2", b64)).Expect(t, 413)
		if r.Code(t) != "audio_too_large" {
			t.Fatalf("recording: 413 %s", r.Body)
		}
		s.Do(t, "GET", "/api/reports/recordings?tenant="+tenant, s.Key, nil).Expect(t, 200).ExpectHeader(t, "X-Total-Count", "0")
		if left := allFiles(t, filepath.Join(s.Cfg.Media.Dir, tenant)); len(left) != 0 {
			t.Fatalf("files left: %v", left)
		}
		// A short prompt is still taken.
		s.Do(t, "POST", base, key, map[string]any{"name": "short", "audio_base64": base64.StdEncoding.EncodeToString(silenceFLAC(t, 5))}).Expect(t, 201)
	})
}

// TestStorageQuotaIsEnforced: a tenant with max_storage_mb 1 cannot store
// a prompt, hold-music file, recording, voicemail or CDR file that would
// take it over 1 MB (413 storage_quota_exceeded, nothing stored); what
// fits is taken, and counts.
func TestStorageQuotaIsEnforced(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := storetest.Name("quota")
		s.Do(t, "POST", "/api/tenants/", s.Key, map[string]any{"tenant": tenant, "callerid": "+27110000000", "max_storage_mb": 1}).Expect(t, 201)
		base := "/api/tenants/" + tenant + "/voice_prompts/"
		// 30 s at 16 kHz is 960 kB stored: the first fits, nothing more does.
		tone := base64.StdEncoding.EncodeToString(mediatest.Tone(t, "t.mp3", 30))
		first := s.Do(t, "POST", base, s.Key, map[string]any{"name": "first", "audio_base64": tone}).Expect(t, 201).Map(t)
		quota := func(r *apptest.Response, what string) {
			t.Helper()
			r.Expect(t, 413)
			if r.Code(t) != "storage_quota_exceeded" || !strings.Contains(r.Map(t)["error"].(string), "1 MB") {
				t.Fatalf("%s: 413 %s", what, r.Body)
			}
		}
		quota(s.Do(t, "POST", base, s.Key, map[string]any{"name": "second", "audio_base64": tone}), "prompt")
		_, filesPath := mohClass(t, s, tenant, "q")
		quota(s.Do(t, "POST", filesPath, s.Key, map[string]any{"external_id": "q-1", "audio_base64": tone}), "music on hold")
		quota(s.Do(t, "POST", "/api/tenants/"+tenant+"/recordedcalls", s.Key, recordingBody("q-2", tone)), "recording")
		s.Do(t, "POST", "/api/tenants/"+tenant+"/extensions/", s.Key, map[string]any{"name": "1001"}).Expect(t, 201)
		quota(s.Do(t, "POST", "/api/tenants/"+tenant+"/imports/voicemail", s.Key, map[string]any{"external_id": "q-3", "mailbox": "1001", "audio_base64": tone}), "voicemail")
		csv := "external_id,start,duration,src,dst,direction,disposition\n" + strings.Repeat("x", 600<<10)
		quota(s.DoHeaders(t, "POST", "/api/tenants/"+tenant+"/imports/cdrs", map[string]string{"X-API-Key": s.Key, "Content-Type": "text/csv"}, []byte(csv)), "CDR file")

		s.Do(t, "GET", base, s.Key, nil).Expect(t, 200).ExpectHeader(t, "X-Total-Count", "1")
		s.Do(t, "GET", "/api/reports/recordings?tenant="+tenant, s.Key, nil).Expect(t, 200).ExpectHeader(t, "X-Total-Count", "0")
		left := allFiles(t, filepath.Join(s.Cfg.Media.Dir, tenant))
		if len(left) != 1 || filepath.Base(left[0]) != first["filename"] {
			t.Fatalf("files %v, want only %v", left, first["filename"])
		}
		if spooled := allFiles(t, filepath.Join(s.Cfg.Media.Dir, ".imports")); len(spooled) != 0 {
			t.Fatalf("spooled CDR files %v", spooled)
		}
		// Deleting the prompt frees its space.
		s.Do(t, "DELETE", base+fmt.Sprint(first["id"]), s.Key, nil).Expect(t, 204)
		s.Do(t, "POST", base, s.Key, map[string]any{"name": "second", "audio_base64": tone}).Expect(t, 201)
	})
}

// TestDeletedMediaLeavesNoFiles: deleting a voice prompt removes its file;
// deleting a music-on-hold class removes its files.
func TestDeletedMediaLeavesNoFiles(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "del")
		base := "/api/tenants/" + tenant + "/voice_prompts/"
		wav := base64.StdEncoding.EncodeToString(mediatest.Tone(t, "d.wav", 1))
		p := s.Do(t, "POST", base, s.Key, map[string]any{"name": "gone", "audio_base64": wav}).Expect(t, 201).Map(t)
		kept := s.Do(t, "POST", base, s.Key, map[string]any{"name": "kept", "audio_base64": wav}).Expect(t, 201).Map(t)
		file := filepath.Join(s.Cfg.Media.Dir, tenant, p["filename"].(string))
		if _, err := os.Stat(file); err != nil {
			t.Fatal(err)
		}
		s.Do(t, "DELETE", base+fmt.Sprint(p["id"]), s.Key, nil).Expect(t, 204)
		wait.Until(t, 60*time.Second, "the deleted prompt's file removed", func() bool {
			_, err := os.Stat(file)
			return os.IsNotExist(err)
		})
		if _, err := os.Stat(filepath.Join(s.Cfg.Media.Dir, tenant, kept["filename"].(string))); err != nil {
			t.Fatalf("the other prompt's file: %v", err)
		}

		classPath, filesPath := mohClass(t, s, tenant, "gone")
		s.Do(t, "POST", filesPath, s.Key, map[string]any{"external_id": "m-1", "audio_base64": wav}).Expect(t, 201)
		classDir := filepath.Join(s.Cfg.Media.Dir, tenant, "moh", "gone")
		if files := filesIn(t, classDir); len(files) != 1 {
			t.Fatalf("class files %v", files)
		}
		s.Do(t, "DELETE", classPath, s.Key, nil).Expect(t, 204)
		wait.Until(t, 60*time.Second, "the deleted class's files removed", func() bool {
			return len(allFiles(t, classDir)) == 0
		})
		// The class's external_id is free again: its row went with it.
		_, filesPath = mohClass(t, s, tenant, "again")
		s.Do(t, "POST", filesPath, s.Key, map[string]any{"external_id": "m-1", "audio_base64": wav}).Expect(t, 201)
	})
}

// TestDeletedTenantLeavesNoFiles: deleting a tenant removes its prompts,
// hold music and imported recordings from disk, and its recordings from
// the report.
func TestDeletedTenantLeavesNoFiles(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "tdel")
		other := s.Tenant(t, "tkeep")
		wav := base64.StdEncoding.EncodeToString(mediatest.Tone(t, "d.wav", 1))
		for _, tn := range []string{tenant, other} {
			s.Do(t, "POST", "/api/tenants/"+tn+"/voice_prompts/", s.Key, map[string]any{"name": "p", "audio_base64": wav}).Expect(t, 201)
			s.Do(t, "POST", "/api/tenants/"+tn+"/recordedcalls", s.Key, recordingBody("r-1", wav)).Expect(t, 201)
		}
		_, filesPath := mohClass(t, s, tenant, "m")
		s.Do(t, "POST", filesPath, s.Key, map[string]any{"external_id": "m-1", "audio_base64": wav}).Expect(t, 201)
		if n := len(allFiles(t, filepath.Join(s.Cfg.Media.Dir, tenant))); n != 3 {
			t.Fatalf("%d files before the delete", n)
		}
		s.Do(t, "DELETE", "/api/tenants/"+tenant, s.Key, nil).Expect(t, 204)
		wait.Until(t, 60*time.Second, "the deleted tenant's files removed", func() bool {
			_, err := os.Stat(filepath.Join(s.Cfg.Media.Dir, tenant))
			return os.IsNotExist(err)
		})
		if n := len(allFiles(t, filepath.Join(s.Cfg.Media.Dir, other))); n != 2 {
			t.Fatalf("the other tenant has %d files, want 2", n)
		}
		// The name taken again starts empty: no recordings of the old tenant.
		s.Do(t, "POST", "/api/tenants/", s.Key, map[string]any{"tenant": tenant, "callerid": "+27110000000"}).Expect(t, 201)
		s.Do(t, "GET", "/api/reports/recordings?tenant="+tenant, s.Key, nil).Expect(t, 200).ExpectHeader(t, "X-Total-Count", "0")
		s.Do(t, "POST", "/api/tenants/"+tenant+"/recordedcalls", s.Key, recordingBody("r-1", wav)).Expect(t, 201)
	})
}

// TestEmptyAudioIsRefused: audio_base64 "" is a 400 naming the field, and
// no prompt is made.
func TestEmptyAudioIsRefused(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "empty")
		base := "/api/tenants/" + tenant + "/voice_prompts/"
		fieldError(t, s.Do(t, "POST", base, s.Key, map[string]any{"name": "empty", "audio_base64": ""}), "audio_base64", "empty")
		s.Do(t, "GET", base, s.Key, nil).Expect(t, 200).ExpectHeader(t, "X-Total-Count", "0")
	})
}

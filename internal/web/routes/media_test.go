package routes_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/media/mediatest"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

// filesIn lists the names in dir (none when it does not exist).
func filesIn(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// multipartBody builds a form with text fields and an "audio" file part.
func multipartBody(t *testing.T, fields map[string]string, audio []byte) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	part, err := w.CreateFormFile("audio", "clip.txt") // the name says nothing: the bytes decide
	if err != nil {
		t.Fatal(err)
	}
	_, _ = part.Write(audio)
	_ = w.Close()
	return w.FormDataContentType(), buf.Bytes()
}

// TestVoicePromptUploadConvertsAndServesToNodes: a WAV in JSON and an MP3
// in multipart become 16 kHz mono WAVs in the tenant's media directory,
// which FreeSWITCH fetches with the /fs/xml credentials; text is 415.
func TestVoicePromptUploadConvertsAndServesToNodes(t *testing.T) {
	env := map[string]string{"SWITCHBOARD_XMLCURL_USER": "fs", "SWITCHBOARD_XMLCURL_PASSWORD": "node-secret"}
	apptest.Each(t, env, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "vp")
		base := "/api/tenants/" + tenant + "/voice_prompts/"
		wav := mediatest.Tone(t, "hello.wav", 2)
		got := s.Do(t, "POST", base, s.Key, map[string]any{"name": "hello", "audio_base64": base64.StdEncoding.EncodeToString(wav)}).Expect(t, 201).Map(t)
		if got["format"] != "wav" || got["duration_ms"].(float64) < 1900 || got["duration_ms"].(float64) > 2100 || got["size_bytes"].(float64) < 60000 {
			t.Fatalf("created %v", got)
		}
		if _, ok := got["audio_base64"]; ok {
			t.Fatal("audio_base64 echoed back")
		}
		file := got["filename"].(string)
		stored, err := os.ReadFile(filepath.Join(s.Cfg.Media.Dir, tenant, file))
		if err != nil {
			t.Fatal(err)
		}
		// 16 kHz, mono, 16-bit PCM in the fmt chunk.
		if string(stored[:4]) != "RIFF" || stored[22] != 1 || int(stored[24])|int(stored[25])<<8 != 16000 || stored[34] != 16 {
			t.Fatalf("stored header % x", stored[:36])
		}

		ctype, body := multipartBody(t, map[string]string{"name": "menu", "language": "en"}, mediatest.Tone(t, "menu.mp3", 1))
		mp := s.DoHeaders(t, "POST", base, map[string]string{"X-API-Key": s.Key, "Content-Type": ctype}, body).Expect(t, 201).Map(t)
		if mp["format"] != "mp3" || mp["name"] != "menu" {
			t.Fatalf("multipart created %v", mp)
		}
		// Multipart needs an API key header (a cross-site form cannot set one).
		s.DoHeaders(t, "POST", base, map[string]string{"Authorization": "Basic eDp5", "Content-Type": ctype}, body).Expect(t, 403)

		// FreeSWITCH fetches the file with the /fs/xml credentials only.
		nodeURL := "/fs/media/" + tenant + "/" + file
		s.DoHeaders(t, "GET", nodeURL, nil, nil).Expect(t, 401)
		s.DoHeaders(t, "GET", nodeURL, map[string]string{"Authorization": basic("fs", "wrong")}, nil).Expect(t, 401)
		r := s.DoHeaders(t, "GET", nodeURL, map[string]string{"Authorization": basic("fs", "node-secret")}, nil).Expect(t, 200)
		if !bytes.Equal(r.Body, stored) || r.Header.Get("Content-Type") != "audio/wav" {
			t.Fatalf("node got %d bytes (%s), want the stored %d", len(r.Body), r.Header.Get("Content-Type"), len(stored))
		}
		s.DoHeaders(t, "GET", "/fs/media/"+tenant+"/..%2Fsecret.key", map[string]string{"Authorization": basic("fs", "node-secret")}, nil).Expect(t, 404)

		// Not audio: 415, nothing stored.
		before := filesIn(t, filepath.Join(s.Cfg.Media.Dir, tenant))
		r = s.Do(t, "POST", base, s.Key, map[string]any{"name": "text", "audio_base64": base64.StdEncoding.EncodeToString([]byte("just some text, not audio"))}).Expect(t, 415)
		if r.Code(t) != "unsupported_audio" {
			t.Fatalf("code %s", r.Code(t))
		}
		s.Do(t, "GET", base+"?limit=10", s.Key, nil).Expect(t, 200).ExpectHeader(t, "X-Total-Count", "2")
		if after := filesIn(t, filepath.Join(s.Cfg.Media.Dir, tenant)); len(after) != len(before) {
			t.Fatalf("files %v after a refused upload, before %v", after, before)
		}
	})
}

// TestAudioOverLimitIsRefusedWithNothingStored: over
// SWITCHBOARD_MEDIA_MAX_BYTES answers 413 and leaves no row and no file.
func TestAudioOverLimitIsRefusedWithNothingStored(t *testing.T) {
	apptest.Each(t, map[string]string{"SWITCHBOARD_MEDIA_MAX_BYTES": "20000"}, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "big")
		big := base64.StdEncoding.EncodeToString(mediatest.Tone(t, "big.wav", 2)) // ~350 kB
		s.Do(t, "POST", "/api/tenants/"+tenant+"/voice_prompts/", s.Key, map[string]any{"name": "big", "audio_base64": big}).Expect(t, 413)
		rec := recordingBody("big-1", big)
		s.Do(t, "POST", "/api/tenants/"+tenant+"/recordedcalls", s.Key, rec).Expect(t, 413)
		s.Do(t, "POST", "/api/tenants/"+tenant+"/extensions/", s.Key, map[string]any{"name": "1001"}).Expect(t, 201)
		s.Do(t, "POST", "/api/tenants/"+tenant+"/imports/voicemail", s.Key, map[string]any{"external_id": "big-vm", "mailbox": "1001", "audio_base64": big}).Expect(t, 413)
		s.Do(t, "GET", "/api/tenants/"+tenant+"/voice_prompts/", s.Key, nil).Expect(t, 200).ExpectHeader(t, "X-Total-Count", "0")
		s.Do(t, "GET", "/api/reports/recordings?tenant="+tenant, s.Key, nil).Expect(t, 200).ExpectHeader(t, "X-Total-Count", "0")
		var all []string
		_ = filepath.Walk(s.Cfg.Media.Dir, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				all = append(all, p)
			}
			return nil
		})
		if len(all) != 0 {
			t.Fatalf("files left: %v", all)
		}
	})
}

func recordingBody(externalID, audio string) map[string]any {
	return map[string]any{"audio_base64": audio, "when": "2026-03-01T09:30:00+02:00", "type": "extension",
		"src": "1001", "dst": "+27215550100", "duration": 2, "external_id": externalID}
}

func basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// TestRecordingImportIsIdempotent: a new external_id is 201, a repeat 200
// with the same object, other content 409 naming what differs, and
// concurrent repeats of a new one make exactly one recording and one file.
func TestRecordingImportIsIdempotent(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "rec")
		path := "/api/tenants/" + tenant + "/recordedcalls"
		s.Do(t, "POST", "/api/tenants/"+tenant+"/extensions/", s.Key, map[string]any{"name": "1001", "first_name": "Eve"}).Expect(t, 201)
		mp3 := base64.StdEncoding.EncodeToString(mediatest.Tone(t, "call.mp3", 2))

		first := s.Do(t, "POST", path, s.Key, recordingBody("pbx-1", mp3)).Expect(t, 201).Map(t)
		if first["created"] != true || first["extension"] != "1001" || first["source_format"] != "mp3" || first["when"] != "2026-03-01T07:30:00Z" || first["duration"].(float64) != 2 {
			t.Fatalf("created %v", first)
		}
		again := s.Do(t, "POST", path, s.Key, recordingBody("pbx-1", mp3)).Expect(t, 200).Map(t)
		if again["created"] != false || again["id"] != first["id"] {
			t.Fatalf("repeat %v, first %v", again, first)
		}
		other := recordingBody("pbx-1", mp3)
		other["dst"] = "+27215550199"
		conflict(t, s.Do(t, "POST", path, s.Key, other), "pbx-1", "dst")
		otherAudio := recordingBody("pbx-1", base64.StdEncoding.EncodeToString(mediatest.Tone(t, "other.wav", 1)))
		conflict(t, s.Do(t, "POST", path, s.Key, otherAudio), "audio")

		// Concurrent repeats of a new external_id: one object.
		var wg sync.WaitGroup
		statuses := make([]int, 6)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = s.Do(t, "POST", path, s.Key, recordingBody("pbx-2", mp3)).Status
			}()
		}
		wg.Wait()
		created := 0
		for _, st := range statuses {
			switch st {
			case 201:
				created++
			case 200:
			default:
				t.Fatalf("concurrent statuses %v", statuses)
			}
		}
		if created != 1 {
			t.Fatalf("concurrent statuses %v: want one 201", statuses)
		}
		s.Do(t, "GET", "/api/reports/recordings?tenant="+tenant, s.Key, nil).Expect(t, 200).ExpectHeader(t, "X-Total-Count", "2")
		if files := filesIn(t, filepath.Join(s.Cfg.Media.Dir, tenant, "recordings")); len(files) != 2 {
			t.Fatalf("recording files %v, want 2", files)
		}

		// Validation: reserved type, future time, not base64.
		bad := recordingBody("pbx-3", mp3)
		bad["type"] = "queue"
		fieldError(t, s.Do(t, "POST", path, s.Key, bad), "type", "reserved")
		bad = recordingBody("pbx-3", mp3)
		bad["when"] = "2999-01-01T00:00:00Z"
		fieldError(t, s.Do(t, "POST", path, s.Key, bad), "when", "future")
		fieldError(t, s.Do(t, "POST", path, s.Key, recordingBody("pbx-3", "***")), "audio_base64", "base64")
		s.Do(t, "POST", path, s.Key, recordingBody("pbx-3", base64.StdEncoding.EncodeToString([]byte("%PDF-1.4 not audio")))).Expect(t, 415)
	})
}

// TestRecordingsReportAndRangeDownload: the report filters by date,
// extension and number with paging; the download answers Range with 206;
// another tenant's key sees neither.
func TestRecordingsReportAndRangeDownload(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "rep")
		path := "/api/tenants/" + tenant + "/recordedcalls"
		s.Do(t, "POST", "/api/tenants/"+tenant+"/extensions/", s.Key, map[string]any{"name": "1001", "first_name": "Eve"}).Expect(t, 201)
		s.Do(t, "POST", "/api/tenants/"+tenant+"/extensions/", s.Key, map[string]any{"name": "1002", "first_name": "Bob"}).Expect(t, 201)
		wav := base64.StdEncoding.EncodeToString(mediatest.Tone(t, "r.wav", 1))
		for i, c := range []struct{ src, dst, when string }{
			{"1001", "+27215550100", "2026-03-01T08:00:00Z"},
			{"1002", "+27215550100", "2026-03-02T08:00:00Z"},
			{"+27825550001", "1001", "2026-03-03T08:00:00Z"},
		} {
			b := recordingBody(fmt.Sprintf("r-%d", i), wav)
			b["src"], b["dst"], b["when"] = c.src, c.dst, c.when
			s.Do(t, "POST", path, s.Key, b).Expect(t, 201)
		}
		list := func(q string) []map[string]any {
			var out []map[string]any
			s.Do(t, "GET", "/api/reports/recordings?tenant="+tenant+q, s.Key, nil).Expect(t, 200).JSON(t, &out)
			return out
		}
		if got := list("&extension=1001"); len(got) != 2 || got[0]["external_id"] != "r-2" || got[1]["external_id"] != "r-0" {
			t.Fatalf("extension 1001: %v", got)
		}
		if got := list("&number=%2B27215550100"); len(got) != 2 {
			t.Fatalf("number: %v", got)
		}
		if got := list("&from=2026-03-02T00:00:00Z&to=2026-03-03T00:00:00Z"); len(got) != 1 || got[0]["external_id"] != "r-1" {
			t.Fatalf("dates: %v", got)
		}
		page := s.Do(t, "GET", "/api/reports/recordings?tenant="+tenant+"&limit=2&offset=0", s.Key, nil).Expect(t, 200).ExpectHeader(t, "X-Total-Count", "3")
		if !strings.Contains(page.Header.Get("Link"), `rel="next"`) {
			t.Fatalf("Link %q", page.Header.Get("Link"))
		}

		one := list("&extension=1002")[0]
		dl := strings.TrimPrefix(one["download_url"].(string), s.Cfg.BaseURL)
		full := s.Do(t, "GET", dl, s.Key, nil).Expect(t, 200)
		if string(full.Body[:4]) != "RIFF" || full.Header.Get("Accept-Ranges") != "bytes" || fmt.Sprint(len(full.Body)) != fmt.Sprint(one["size_bytes"]) {
			t.Fatalf("download: %d bytes, %v", len(full.Body), full.Header)
		}
		part := s.DoHeaders(t, "GET", dl, map[string]string{"X-API-Key": s.Key, "Range": "bytes=8-11"}, nil).Expect(t, http.StatusPartialContent)
		if string(part.Body) != "WAVE" || part.Header.Get("Content-Range") != fmt.Sprintf("bytes 8-11/%d", len(full.Body)) {
			t.Fatalf("range: %q %v", part.Body, part.Header)
		}

		// Another tenant's key: no report rows of this tenant, no download.
		otherTenant := s.Tenant(t, "rep2")
		other := s.KeyFor(t, map[string]any{"tenant": otherTenant})
		s.Do(t, "GET", "/api/reports/recordings?tenant="+tenant, other, nil).Expect(t, 403)
		s.Do(t, "GET", "/api/reports/recordings", other, nil).Expect(t, 200).ExpectHeader(t, "X-Total-Count", "0")
		s.Do(t, "GET", dl, other, nil).Expect(t, 403)
		s.Do(t, "GET", strings.Replace(dl, tenant, otherTenant, 1), other, nil).Expect(t, 404)
	})
}

// TestCloneCopiesPromptFiles: tenant_voiceprompts copies each prompt's file
// and each music-on-hold class's files (with their rows) into the new
// tenant's media directory, where its nodes fetch and stream them, and the
// create answer's clone_report names every file copied.
func TestCloneCopiesPromptFiles(t *testing.T) {
	env := map[string]string{"SWITCHBOARD_XMLCURL_USER": "fs", "SWITCHBOARD_XMLCURL_PASSWORD": "node-secret"}
	apptest.Each(t, env, func(t *testing.T, s *apptest.Server) {
		src := s.Tenant(t, "vpsrc")
		wav := mediatest.Tone(t, "hello.wav", 1)
		p := s.Do(t, "POST", "/api/tenants/"+src+"/voice_prompts/", s.Key, map[string]any{"name": "hello", "audio_base64": base64.StdEncoding.EncodeToString(wav)}).Expect(t, 201).Map(t)
		class := s.Do(t, "POST", "/api/tenants/"+src+"/music_on_hold/", s.Key, map[string]any{"name": "jazz", "rate": 16000}).Expect(t, 201).Map(t)
		var mohFiles []string
		for i, secs := range []int{1, 2} {
			f := s.Do(t, "POST", fmt.Sprintf("/api/tenants/%s/music_on_hold/%v/files", src, class["id"]), s.Key, map[string]any{
				"external_id": fmt.Sprintf("jazz-%d", i), "audio_base64": base64.StdEncoding.EncodeToString(mediatest.Tone(t, "jazz.wav", secs)),
			}).Expect(t, 201).Map(t)
			mohFiles = append(mohFiles, f["filename"].(string))
		}
		dst := strings.ToLower("vpdst" + src[len(src)-6:])
		created := s.Do(t, "POST", "/api/tenants/", s.Key, map[string]any{"tenant": dst, "tenant_to_clone": src, "tenant_voiceprompts": "1"}).Expect(t, 201).Map(t)
		wantReport := []string{
			fmt.Sprintf("voice_prompts %v: copied file %s", p["id"], p["filename"]),
			fmt.Sprintf("music_on_hold %v: copied file %s", class["id"], mohFiles[0]),
			fmt.Sprintf("music_on_hold %v: copied file %s", class["id"], mohFiles[1]),
		}
		var report []string
		for _, r := range created["clone_report"].([]any) {
			report = append(report, r.(string))
		}
		for _, w := range wantReport {
			if !slices.Contains(report, w) {
				t.Errorf("clone_report %q lacks %q", report, w)
			}
		}
		// The copied class lists its files and they are on disk, the same
		// bytes, in the clone's stream directory; a repeat import of the
		// same external_id into the copy is the same file (its row copied).
		var classes []map[string]any
		s.Do(t, "GET", "/api/tenants/"+dst+"/music_on_hold/", s.Key, nil).Expect(t, 200).JSON(t, &classes)
		if len(classes) != 1 || len(classes[0]["files"].([]any)) != 2 {
			t.Fatalf("copied classes %v", classes)
		}
		for _, name := range mohFiles {
			orig, err := os.ReadFile(filepath.Join(s.Cfg.Media.Dir, src, "moh", "jazz", name))
			if err != nil {
				t.Fatal(err)
			}
			cp, err := os.ReadFile(filepath.Join(s.Cfg.Media.Dir, dst, "moh", "jazz", name))
			if err != nil || !bytes.Equal(cp, orig) {
				t.Fatalf("copied moh file %s: %v (%d bytes, want %d)", name, err, len(cp), len(orig))
			}
		}
		s.Do(t, "POST", fmt.Sprintf("/api/tenants/%s/music_on_hold/%v/files", dst, classes[0]["id"]), s.Key, map[string]any{
			"external_id": "jazz-0", "audio_base64": base64.StdEncoding.EncodeToString(mediatest.Tone(t, "jazz.wav", 1)),
		}).Expect(t, 200)
		var copies []map[string]any
		s.Do(t, "GET", "/api/tenants/"+dst+"/voice_prompts/", s.Key, nil).Expect(t, 200).JSON(t, &copies)
		if len(copies) != 1 || copies[0]["filename"] != p["filename"] {
			t.Fatalf("copied prompts %v", copies)
		}
		orig, err := os.ReadFile(filepath.Join(s.Cfg.Media.Dir, src, p["filename"].(string)))
		if err != nil {
			t.Fatal(err)
		}
		r := s.DoHeaders(t, "GET", "/fs/media/"+dst+"/"+p["filename"].(string), map[string]string{"Authorization": basic("fs", "node-secret")}, nil).Expect(t, 200)
		if !bytes.Equal(r.Body, orig) {
			t.Fatalf("the clone's node gets %d bytes, want the source's %d", len(r.Body), len(orig))
		}
	})
}

// TestRecordActionRecordingsAreNotIndexed: a call recorded with the record
// action keeps its file on the node (the CDR names it in recording_path)
// but is not listed by the recordings report, which lists imported
// recordings only.
func TestRecordActionRecordingsAreNotIndexed(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		id, uuid := e.liveChannel(t, e.tenant, "1001")
		path := e.Do(t, "POST", "/api/telephony/record", e.Key, map[string]any{"channel": id, "filename": "live-1"}).Expect(t, 200).Map(t)["path"]
		if path != "/rec/"+e.tenant+"/live-1.wav" {
			t.Fatalf("record path %v", path)
		}
		waitCommand(t, e.fs, "api uuid_record")
		if err := e.fs.Hangup(uuid, "NORMAL_CLEARING"); err != nil {
			t.Fatal(err)
		}
		var cdr map[string]any
		wait.Until(t, 10*time.Second, "the recorded call's CDR", func() bool {
			var cdrs []map[string]any
			e.Do(t, "GET", "/api/reports/cdrs?tenant="+e.tenant, e.Key, nil).Expect(t, 200).JSON(t, &cdrs)
			for _, c := range cdrs {
				if c["uuid"] == uuid {
					cdr = c
				}
			}
			return cdr != nil
		})
		if cdr["recording_path"] != path {
			t.Fatalf("CDR recording_path %v, want %v", cdr["recording_path"], path)
		}
		var recs []map[string]any
		e.Do(t, "GET", "/api/reports/recordings?tenant="+e.tenant, e.Key, nil).Expect(t, 200).ExpectHeader(t, "X-Total-Count", "0").JSON(t, &recs)
		if len(recs) != 0 {
			t.Fatalf("the recordings report lists %v", recs)
		}

		// An imported recording of the same tenant is listed, alone.
		wav := base64.StdEncoding.EncodeToString(mediatest.Tone(t, "imp.wav", 1))
		e.Do(t, "POST", "/api/tenants/"+e.tenant+"/recordedcalls", e.Key, recordingBody("imp-1", wav)).Expect(t, 201)
		e.Do(t, "GET", "/api/reports/recordings?tenant="+e.tenant, e.Key, nil).Expect(t, 200).ExpectHeader(t, "X-Total-Count", "1").JSON(t, &recs)
		if len(recs) != 1 || recs[0]["external_id"] != "imp-1" {
			t.Fatalf("the recordings report lists %v, want the import only", recs)
		}
	})
}

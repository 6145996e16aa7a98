package routes_test

import (
	"encoding/base64"
	"fmt"
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

// TestMusicOnHoldReachesFreeSWITCH: local_stream.conf lists the tenant's
// class under the media directory, and every change to a class reaches
// each node as mod_local_stream commands: reload on create and change,
// stop of the old stream on a rename, stop on delete.
func TestMusicOnHoldReachesFreeSWITCH(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		// The commands for this tenant's classes (streams are named
		// <tenant>_<class>): other tests' classes reach this node too.
		streams := func() []string {
			var out []string
			for _, line := range e.fs.Commands() {
				if strings.HasPrefix(line, "api local_stream") && strings.Contains(line, " "+e.tenant+"_") {
					out = append(out, line)
				}
			}
			return out
		}
		waitFor := func(want string) {
			t.Helper()
			wait.Until(t, 5*time.Second, want, func() bool { return slices.Contains(streams(), want) })
		}
		base := "/api/tenants/" + e.tenant + "/music_on_hold/"
		id := e.Do(t, "POST", base, e.Key, map[string]any{"name": "jazz", "rate": 16000, "shuffle": true}).Expect(t, 201).Map(t)["id"]
		waitFor("api local_stream reload " + e.tenant + "_jazz")

		conf := e.DoHeaders(t, "POST", "/fs/xml", map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
			"section=configuration&tag_name=configuration&key_name=name&key_value=local_stream.conf").Expect(t, 200)
		wantDir := fmt.Sprintf(`<directory name="%s_jazz" path="%s/%s/moh/jazz">`, e.tenant, e.Cfg.Media.NodeDir, e.tenant)
		if !strings.Contains(string(conf.Body), wantDir) || !strings.Contains(string(conf.Body), `<param name="rate" value="16000"/>`) {
			t.Fatalf("local_stream.conf lacks %s:\n%s", wantDir, conf.Body)
		}
		// The platform's default stream, which queues, rooms and phones
		// without a class play (local_stream://moh).
		if def := fmt.Sprintf(`<directory name="moh" path="%s/8000">`, e.Cfg.Media.MOHDefaultDir); e.Cfg.Media.MOHDefaultDir == "" || !strings.Contains(string(conf.Body), def) {
			t.Fatalf("local_stream.conf lacks the default stream %s:\n%s", def, conf.Body)
		}

		// A file added to the class: converted to its rate into its
		// directory, listed in files, the stream reloaded; idempotent.
		n := len(streams())
		mp3 := base64.StdEncoding.EncodeToString(mediatest.Tone(t, "hold.mp3", 1))
		filesPath := fmt.Sprintf("%s%v/files", base, id)
		added := e.Do(t, "POST", filesPath, e.Key, map[string]any{"external_id": "moh-1", "filename_hint": "hold.mp3", "audio_base64": mp3}).Expect(t, 201).Map(t)
		stored, err := os.ReadFile(filepath.Join(e.Cfg.Media.Dir, e.tenant, "moh", "jazz", added["filename"].(string)))
		if err != nil || int(stored[24])|int(stored[25])<<8 != 16000 {
			t.Fatalf("stored file: %v", err)
		}
		wait.Until(t, 5*time.Second, "reload after the file", func() bool { return len(streams()) > n })
		class := e.Do(t, "GET", fmt.Sprintf("%s%v", base, id), e.Key, nil).Expect(t, 200).Map(t)
		if files, _ := class["files"].([]any); len(files) != 1 || files[0].(map[string]any)["filename"] != added["filename"] {
			t.Fatalf("class files %v", class["files"])
		}
		again := e.Do(t, "POST", filesPath, e.Key, map[string]any{"external_id": "moh-1", "audio_base64": mp3}).Expect(t, 200).Map(t)
		if again["id"] != added["id"] || again["created"] != false {
			t.Fatalf("repeat %v", again)
		}
		conflict(t, e.Do(t, "POST", filesPath, e.Key, map[string]any{"external_id": "moh-1", "audio_base64": base64.StdEncoding.EncodeToString(mediatest.Tone(t, "x.wav", 1))}), "audio")

		n = len(streams())
		e.Do(t, "PUT", fmt.Sprintf("%s%v", base, id), e.Key, map[string]any{"name": "smooth"}).Expect(t, 200)
		waitFor("api local_stream reload " + e.tenant + "_smooth")
		if got := streams()[n:]; len(got) != 2 || got[0] != "api local_stream stop "+e.tenant+"_jazz" {
			t.Fatalf("after the rename: %q", got)
		}
		e.Do(t, "DELETE", fmt.Sprintf("%s%v", base, id), e.Key, nil).Expect(t, 204)
		waitFor("api local_stream stop " + e.tenant + "_smooth")
	})
}

// mohClass creates a music-on-hold class and answers its files path.
func mohClass(t *testing.T, s *apptest.Server, tenant, name string) (classPath, filesPath string) {
	t.Helper()
	base := "/api/tenants/" + tenant + "/music_on_hold/"
	id := s.Do(t, "POST", base, s.Key, map[string]any{"name": name, "rate": 8000}).Expect(t, 201).Map(t)["id"]
	return fmt.Sprintf("%s%v", base, id), fmt.Sprintf("%s%v/files", base, id)
}

// TestMusicOnHoldFileConcurrentRepeatsMakeOne: the same file import sent by
// several clients at once answers 201 to one and 200 with the same file to
// the others; the class lists one file and its directory holds one.
func TestMusicOnHoldFileConcurrentRepeatsMakeOne(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "mohc")
		classPath, filesPath := mohClass(t, s, tenant, "lounge")
		mp3 := base64.StdEncoding.EncodeToString(mediatest.Tone(t, "hold.mp3", 1))
		body := map[string]any{"external_id": "old-moh-7", "filename_hint": "hold.mp3", "audio_base64": mp3}
		answers := make([]*apptest.Response, 6)
		var wg sync.WaitGroup
		for i := range answers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers[i] = s.Do(t, "POST", filesPath, s.Key, body)
			}()
		}
		wg.Wait()
		var statuses []int
		ids := map[any]bool{}
		created := 0
		for _, a := range answers {
			statuses = append(statuses, a.Status)
			if a.Status != 200 && a.Status != 201 {
				t.Fatalf("concurrent statuses %v: %s", statuses, a.Body)
			}
			m := a.Map(t)
			ids[m["id"]] = true
			if a.Status == 201 {
				created++
				if m["created"] != true {
					t.Fatalf("201 with created %v", m["created"])
				}
			} else if m["created"] != false {
				t.Fatalf("200 with created %v", m["created"])
			}
		}
		if created != 1 || len(ids) != 1 {
			t.Fatalf("statuses %v, %d distinct files answered: want one 201 and one file", statuses, len(ids))
		}
		class := s.Do(t, "GET", classPath, s.Key, nil).Expect(t, 200).Map(t)
		if files, _ := class["files"].([]any); len(files) != 1 {
			t.Fatalf("class files %v, want one", class["files"])
		}
		if files := filesIn(t, filepath.Join(s.Cfg.Media.Dir, tenant, "moh", "lounge")); len(files) != 1 {
			t.Fatalf("files on disk %v, want one", files)
		}
	})
}

// TestMusicOnHoldFileOverLimitStoresNothing: a music-on-hold file over
// SWITCHBOARD_MEDIA_MAX_BYTES answers 413 (audio_too_large), lists no file
// in its class and leaves nothing in the class's directory; a file under
// the limit is then taken.
func TestMusicOnHoldFileOverLimitStoresNothing(t *testing.T) {
	apptest.Each(t, map[string]string{"SWITCHBOARD_MEDIA_MAX_BYTES": "20000"}, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "mohbig")
		classPath, filesPath := mohClass(t, s, tenant, "big")
		big := base64.StdEncoding.EncodeToString(mediatest.Tone(t, "big.wav", 2)) // ~350 kB
		r := s.Do(t, "POST", filesPath, s.Key, map[string]any{"external_id": "big-1", "audio_base64": big}).Expect(t, 413)
		if r.Code(t) != "audio_too_large" {
			t.Fatalf("413 code %q", r.Code(t))
		}
		class := s.Do(t, "GET", classPath, s.Key, nil).Expect(t, 200).Map(t)
		if files, _ := class["files"].([]any); len(files) != 0 {
			t.Fatalf("class files after a refused upload: %v", class["files"])
		}
		var all []string
		_ = filepath.Walk(filepath.Join(s.Cfg.Media.Dir, tenant), func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				all = append(all, p)
			}
			return nil
		})
		if len(all) != 0 {
			t.Fatalf("files left after a refused upload: %v", all)
		}
		// The external_id is still free: a small file under it is taken.
		small := base64.StdEncoding.EncodeToString(mediatest.Tone(t, "small.mp3", 1))
		s.Do(t, "POST", filesPath, s.Key, map[string]any{"external_id": "big-1", "audio_base64": small}).Expect(t, 201)
	})
}

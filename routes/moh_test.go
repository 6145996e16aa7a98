package routes_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMusicOnHoldReachesFreeSWITCH: local_stream.conf lists the tenant's
// class under the media directory, and every change to a class reaches
// each node as mod_local_stream commands: reload on create and change,
// stop of the old stream on a rename, stop on delete.
func TestMusicOnHoldReachesFreeSWITCH(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		streams := func() []string {
			var out []string
			for _, line := range e.fs.Commands() {
				if strings.HasPrefix(line, "api local_stream") {
					out = append(out, line)
				}
			}
			return out
		}
		waitFor := func(want string) {
			t.Helper()
			eventually(t, 5*time.Second, want, func() bool { return slices.Contains(streams(), want) })
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

		n := len(streams())
		e.Do(t, "PUT", fmt.Sprintf("%s%v", base, id), e.Key, map[string]any{"name": "smooth"}).Expect(t, 200)
		waitFor("api local_stream reload " + e.tenant + "_smooth")
		if got := streams()[n:]; len(got) != 2 || got[0] != "api local_stream stop "+e.tenant+"_jazz" {
			t.Fatalf("after the rename: %q", got)
		}
		e.Do(t, "DELETE", fmt.Sprintf("%s%v", base, id), e.Key, nil).Expect(t, 204)
		waitFor("api local_stream stop " + e.tenant + "_smooth")
	})
}

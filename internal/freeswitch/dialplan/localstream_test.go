package dialplan

import (
	"encoding/xml"
	"testing"
)

// TestLocalStreamConfGolden: the platform's default stream moh (moh/8000,
// moh/16000 and moh itself, which FreeSWITCH plays when no class is set),
// then every enabled tenant's classes as directories under the node's
// media path, with rate, shuffle and chimes; a disabled tenant's class and
// unsafe names are left out.
func TestLocalStreamConfGolden(t *testing.T) {
	doc := LocalStreamConf("/var/lib/switchboard/media", "/usr/share/freeswitch/sounds/music", testMedia, []MOHClass{
		{Tenant: "acme", Name: "default", Rate: 8000, TenantEnabled: true},
		{Tenant: "acme", Name: "jazz", Rate: 16000, Shuffle: true, ChimeFile: "0f1e2d.wav", ChimeFrequency: 45, ChimeMax: 3, TenantEnabled: true},
		{Tenant: "globex", Name: "calm", Rate: 48000, TenantEnabled: false},
		{Tenant: "acme", Name: "../etc", Rate: 8000, TenantEnabled: true},
		{Tenant: "acme", Name: "x${y}", Rate: 8000, TenantEnabled: true},
	})
	golden(t, "local_stream.conf.xml", doc)
	var parsed struct {
		Section struct {
			Config struct {
				Name string `xml:"name,attr"`
				Dirs []struct {
					Name string `xml:"name,attr"`
					Path string `xml:"path,attr"`
				} `xml:"directory"`
			} `xml:"configuration"`
		} `xml:"section"`
	}
	if err := xml.Unmarshal(doc, &parsed); err != nil {
		t.Fatalf("not XML: %v", err)
	}
	got := parsed.Section.Config.Dirs
	if len(got) != 5 || got[4].Name != "acme_jazz" || got[4].Path != "/var/lib/switchboard/media/acme/moh/jazz" {
		t.Fatalf("directories %+v", got)
	}
	// local_stream://moh opens moh/<channel rate>, else moh.
	for i, want := range [][2]string{{"moh/8000", "/usr/share/freeswitch/sounds/music/8000"}, {"moh/16000", "/usr/share/freeswitch/sounds/music/16000"}, {"moh", "/usr/share/freeswitch/sounds/music/8000"}} {
		if got[i].Name != want[0] || got[i].Path != want[1] {
			t.Fatalf("default stream %d: %+v, want %v", i, got[i], want)
		}
	}
	// A media path that is not a safe absolute path renders no class, and
	// an unsafe default directory no default stream.
	for _, dirs := range [][2]string{{"relative/dir", "/usr/share/music"}, {"/srv/media", "/usr/../etc"}, {"/srv/media", "music"}} {
		parsed.Section.Config.Dirs = nil
		if err := xml.Unmarshal(LocalStreamConf(dirs[0], dirs[1], testMedia, []MOHClass{{Tenant: "acme", Name: "a", TenantEnabled: true}}), &parsed); err != nil || len(parsed.Section.Config.Dirs) != 3 && len(parsed.Section.Config.Dirs) != 1 {
			t.Fatalf("dirs %v: %+v %v", dirs, parsed.Section.Config.Dirs, err)
		}
		if (dirs[0] == "relative/dir") != (len(parsed.Section.Config.Dirs) == 3) {
			t.Fatalf("dirs %v: %+v", dirs, parsed.Section.Config.Dirs)
		}
	}
}

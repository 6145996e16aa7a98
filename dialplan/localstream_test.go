package dialplan

import (
	"encoding/xml"
	"testing"
)

// TestLocalStreamConfGolden: every enabled tenant's classes as directories
// under the node's media path, with rate, shuffle and chimes; a disabled
// tenant's class and unsafe names are left out.
func TestLocalStreamConfGolden(t *testing.T) {
	doc := LocalStreamConf("/var/lib/switchboard/media", testMedia, []MOHClass{
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
	if got := parsed.Section.Config.Dirs; len(got) != 2 || got[1].Name != "acme_jazz" || got[1].Path != "/var/lib/switchboard/media/acme/moh/jazz" {
		t.Fatalf("directories %+v", got)
	}
	// A media path that is not a safe absolute path renders no directory.
	parsed.Section.Config.Dirs = nil
	if err := xml.Unmarshal(LocalStreamConf("relative/dir", testMedia, []MOHClass{{Tenant: "acme", Name: "a", TenantEnabled: true}}), &parsed); err != nil || len(parsed.Section.Config.Dirs) != 0 {
		t.Fatalf("relative media dir: %+v %v", parsed.Section.Config.Dirs, err)
	}
}

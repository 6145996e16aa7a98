package dialplan

import (
	"strings"
	"testing"
)

// TestMediaURLs: a signed http_cache:// URL per library path that Verify
// accepts for that path only; unsafe bases and parts render nothing; with
// no base, prompts stay paths under SoundsDir (nodes mounting the library).
func TestMediaURLs(t *testing.T) {
	u := testMedia.URL("acme", "moh", "jazz", "a.wav")
	prefix := "http_cache://https://sb.example/fs/media/acme/moh/jazz/a.wav?sig="
	if !strings.HasPrefix(u, prefix) || len(u) != len(prefix)+mediaSigLen {
		t.Fatalf("URL %q", u)
	}
	sig := strings.TrimPrefix(u, prefix)
	if !testMedia.Verify("acme/moh/jazz/a.wav", sig) || testMedia.Verify("acme/moh/jazz/b.wav", sig) || testMedia.Verify("globex/moh/jazz/a.wav", sig) {
		t.Fatal("signature not bound to its path")
	}
	if (MediaURLs{Base: testMedia.Base, Key: []byte("other")}).Verify("acme/moh/jazz/a.wav", sig) || (MediaURLs{}).Verify("acme/moh/jazz/a.wav", sig) {
		t.Fatal("signature accepted under another key")
	}
	for _, base := range []string{"", "ftp://x/fs/media", "https://x/${uuid_kill a}", "https://x/a b", "https://x/a,b", "https://x/a!b", "https://x/\"", "http_cache://https://x"} {
		if got := (MediaURLs{Base: base, Key: testMedia.Key}).URL("acme", "a.wav"); got != "" {
			t.Errorf("base %q rendered %q", base, got)
		}
	}
	for _, part := range []string{"../x.wav", "a/b.wav", "${x}.wav", ""} {
		if got := testMedia.URL("acme", part); got != "" {
			t.Errorf("part %q rendered %q", part, got)
		}
	}
	snap := loadSnap(t)
	opts := testOpts
	opts.Media = MediaURLs{}
	p := &planner{opts: opts, snap: snap, tenant: snap.Tenant.Tenant, trace: &Trace{}}
	if got := p.promptFile("x.wav"); got != "/var/lib/switchboard/sounds/acme/x.wav" {
		t.Fatalf("without a media base: %q", got)
	}
	p.opts = testOpts
	if got := p.promptFile("x.wav"); !strings.HasPrefix(got, "http_cache://https://sb.example/fs/media/acme/x.wav?sig=") {
		t.Fatalf("with a media base: %q", got)
	}
}

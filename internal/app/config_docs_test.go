package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docsMarker precedes each configuration table written from settings.
const docsMarker = "<!-- Written from the settings in internal/app/config.go: SWITCHBOARD_WRITE_DOCS=1 go test ./internal/app -run TestConfigurationDocsAreCurrent -->"

// TestConfigurationDocsAreCurrent: the variable tables of
// docs/configuration.md (every variable) and docs/chat.md (chat and SIP
// over WebSocket) are the settings table; SWITCHBOARD_WRITE_DOCS=1
// rewrites them.
func TestConfigurationDocsAreCurrent(t *testing.T) {
	for file, keep := range map[string]func(setting) bool{
		"configuration.md": func(setting) bool { return true },
		"chat.md":          func(s setting) bool { return s.chat },
	} {
		path := filepath.Join("..", "..", "docs", file)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		doc := string(b)
		i := strings.Index(doc, docsMarker+"\n")
		if i < 0 {
			t.Fatalf("%s: no line %q before the table", path, docsMarker)
		}
		start := i + len(docsMarker) + 1
		end := start
		for end < len(doc) && doc[end] == '|' {
			end += strings.IndexByte(doc[end:], '\n') + 1
		}
		want := settingsTable(keep)
		if doc[start:end] == want {
			continue
		}
		if os.Getenv("SWITCHBOARD_WRITE_DOCS") != "" {
			if err := os.WriteFile(path, []byte(doc[:start]+want+doc[end:]), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("rewrote %s", path)
			continue
		}
		t.Errorf("%s: the table differs from the settings in config.go; run SWITCHBOARD_WRITE_DOCS=1 go test ./internal/app -run TestConfigurationDocsAreCurrent\n--- got\n%s--- want\n%s", path, doc[start:end], want)
	}
}

// TestEverySettingIsDocumentedAndRead: each variable appears once, with a
// meaning, and its default parses (LoadConfig of an empty environment
// succeeding covers the last).
func TestEverySettingIsDocumentedAndRead(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range settings {
		if !strings.HasPrefix(s.name, "SWITCHBOARD_") || seen[s.name] || s.doc == "" || s.set == nil {
			t.Errorf("setting %q: duplicate, unnamed, undocumented or not read", s.name)
		}
		if s.defOf != nil && s.shown == "" {
			t.Errorf("%s: a computed default needs shown", s.name)
		}
		seen[s.name] = true
	}
}

// TestHelpListsEverySetting: `switchboard --help` and `serve --help` end
// with every variable and its default.
func TestHelpListsEverySetting(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"serve", "--help"}} {
		var out, errOut strings.Builder
		if err := Run(t.Context(), Env{Args: args, Getenv: func(string) string { return "" }, Stdout: &out, Stderr: &errOut}); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		for _, s := range settings {
			if !strings.Contains(out.String(), "\n  "+s.name+" (default: "+plainText(s.shownDefault())+")\n") {
				t.Errorf("%v: %s missing from\n%s", args, s.name, out.String())
			}
		}
	}
}

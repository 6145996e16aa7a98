package xmlcurl

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// capture returns the body of a real mod_xml_curl request (testdata/captures).
func capture(t testing.TB, prefix string) []byte {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join("testdata", "captures", prefix+"-*.http"))
	if err != nil || len(matches) != 1 {
		t.Fatalf("capture %s: %v %v", prefix, matches, err)
	}
	raw, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatalf("read capture: %v", err)
	}
	_, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	if !ok {
		t.Fatalf("capture %s: no header/body separator", prefix)
	}
	return body
}

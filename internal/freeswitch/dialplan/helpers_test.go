package dialplan

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/golden")

const testDomain = "sb.example"

// testMedia signs with a fixed key so golden files hold stable URLs.
var testMedia = MediaURLs{Base: "https://sb.example/fs/media", Key: []byte("0123456789abcdef0123456789abcdef")}

var testOpts = Options{Domain: testDomain, SoundsDir: "/var/lib/switchboard/sounds", MediaDir: "/var/lib/switchboard/media", DefaultTimezone: "UTC", SIPWSPort: 5066, Media: testMedia}

// loadSnap decodes testdata/acme.json the way the loader will: as JSON.
func loadSnap(t testing.TB) *TenantSnapshot {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "acme.json"))
	if err != nil {
		t.Fatalf("read snapshot: %v", err)
	}
	var s TenantSnapshot
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("decode snapshot: %v", err)
	}
	return &s
}

// capture returns the body of a real mod_xml_curl request (testdata/captures).
func capture(t testing.TB, prefix string) []byte {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join("..", "xmlcurl", "testdata", "captures", prefix+"-*.http"))
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

// wellFormed decodes doc with encoding/xml to the end.
func wellFormed(t testing.TB, doc []byte) {
	t.Helper()
	if err := xmlCheck(doc); err != nil {
		t.Fatalf("document is not well-formed XML: %v\n%s", err, doc)
	}
}

func xmlCheck(doc []byte) error {
	d := xml.NewDecoder(bytes.NewReader(doc))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// golden compares got with testdata/golden/<name>, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run go test -update): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden file\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// goldenTrace stores the trace next to the document.
func goldenTrace(t *testing.T, name string, tr Trace) {
	t.Helper()
	raw, err := json.MarshalIndent(tr, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, name, append(raw, '\n'))
}

// at is a wall-clock time in Johannesburg (the fixture tenant's zone).
func at(t testing.TB, value string) time.Time {
	t.Helper()
	loc, err := time.LoadLocation("Africa/Johannesburg")
	if err != nil {
		t.Fatal(err)
	}
	v, err := time.ParseInLocation("2006-01-02 15:04", value, loc)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// xmlNode is a generic decoded element, for asserting attribute values.
type xmlNode struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Children []xmlNode  `xml:",any"`
}

func decodeTree(t testing.TB, doc []byte) xmlNode {
	t.Helper()
	var n xmlNode
	if err := xml.Unmarshal(doc, &n); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return n
}

// attrs collects the values of attribute attr on elements named elem whose
// attribute key equals keyVal (key "" = every such element).
func (n xmlNode) find(elem, key, keyVal, attr string) []string {
	var out []string
	if n.XMLName.Local == elem {
		var k, v string
		has := false
		for _, a := range n.Attrs {
			if a.Name.Local == key {
				k = a.Value
			}
			if a.Name.Local == attr {
				v, has = a.Value, true
			}
		}
		if has && (key == "" || k == keyVal) {
			out = append(out, v)
		}
	}
	for _, c := range n.Children {
		out = append(out, c.find(elem, key, keyVal, attr)...)
	}
	return out
}

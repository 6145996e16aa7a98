package sofiaconf

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/switchboard/switchboard/internal/freeswitch/dialplan"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/golden")

var testOpts = dialplan.Options{Domain: "sb.example", SoundsDir: "/var/lib/switchboard/sounds", MediaDir: "/var/lib/switchboard/media", DefaultTimezone: "UTC", SIPWSPort: 5066}

// loadTrunks decodes testdata/trunks.json (the renderer's fixture tenant's
// trunks) the way the loader does: as JSON.
func loadTrunks(t testing.TB) []dialplan.SIPTrunk {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "trunks.json"))
	if err != nil {
		t.Fatalf("read trunks: %v", err)
	}
	var trunks []dialplan.SIPTrunk
	if err := json.Unmarshal(raw, &trunks); err != nil {
		t.Fatalf("decode trunks: %v", err)
	}
	return trunks
}

// capture returns the body of a real mod_xml_curl request (package
// xmlcurl's testdata/captures).
func capture(t testing.TB, prefix string) []byte {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join("..", "..", "xmlcurl", "testdata", "captures", prefix+"-*.http"))
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

// find collects the values of attribute attr on elements named elem whose
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

package provision

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("read golden (run go test -update): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file\n got:\n%s\nwant:\n%s", name, got, want)
	}
}

func device(vendor string) Device {
	return Device{
		MAC: "0015651a2b3c", Vendor: vendor, Model: "T54W", Label: "Reception", Server: "sip.example.com",
		Lines: []Line{
			{Index: 1, User: "1001-acme", Password: "s3cret-1001-pass", DisplayName: "Ann Smith", Label: "Ann"},
			{Index: 2, User: "1002-acme", Password: "s3cret-1002-pass", DisplayName: "Front Desk", Shared: true},
		},
		Keys: []Key{
			{Position: 1, Type: "blf", Value: "1003", Label: "Bob"},
			{Position: 2, Type: "speed_dial", Value: "+27215550100", Label: "Head office"},
		},
	}
}

// TestGoldenFiles: each vendor's files for one device with two lines and
// two keys.
func TestGoldenFiles(t *testing.T) {
	for _, c := range []struct{ vendor, kind, file string }{
		{"yealink", "main", "yealink.cfg"},
		{"polycom", "main", "polycom-master.cfg"},
		{"polycom", "phone", "polycom-phone.cfg"},
	} {
		t.Run(c.file, func(t *testing.T) {
			got, _, err := Render(device(c.vendor), c.kind)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, c.file, got)
		})
	}
	if _, _, err := Render(device("yealink"), "phone"); !errors.Is(err, ErrNoFile) {
		t.Errorf("yealink has no -phone.cfg: %v", err)
	}
	if _, _, err := Render(device("snom"), "main"); !errors.Is(err, ErrNoFile) {
		t.Errorf("snom files are not rendered: %v", err)
	}
}

// TestParkKeys: a park key naming a slot of the lot is a BLF on valet's
// park+<slot> presence (Yealink type 16, Poly attendant), labelled "Park
// <slot>" unless it has a label; a park key with the park code, a slot
// past the lot or a padded number stays Yealink's Call Park key (10) and is
// no Poly attendant.
func TestParkKeys(t *testing.T) {
	keys := []Key{
		{Position: 1, Type: "park", Value: "1"},
		{Position: 2, Type: "park", Value: "20", Label: "Loading bay"},
		{Position: 3, Type: "park", Value: "*70", Label: "Park"},
		{Position: 4, Type: "park", Value: "21"},
		{Position: 5, Type: "park", Value: "05"},
		{Position: 6, Type: "blf", Value: "1003", Label: "Bob"},
	}
	for _, c := range []struct{ vendor, kind, file string }{
		{"yealink", "main", "yealink-park.cfg"},
		{"polycom", "phone", "polycom-park-phone.cfg"},
	} {
		t.Run(c.file, func(t *testing.T) {
			d := device(c.vendor)
			d.Keys = keys
			got, _, err := Render(d, c.kind)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, c.file, got)
		})
	}
	d := device("yealink")
	d.Keys = keys
	y, _, _ := Render(d, "main")
	for _, want := range []string{"linekey.1.type = 16\nlinekey.1.value = park+1\nlinekey.1.label = Park 1\n",
		"linekey.2.type = 16\nlinekey.2.value = park+20\nlinekey.2.label = Loading bay\n",
		"linekey.3.type = 10\nlinekey.3.value = *70\n", "linekey.4.type = 10\nlinekey.4.value = 21\n", "linekey.5.type = 10\nlinekey.5.value = 05\n"} {
		if !strings.Contains(string(y), want) {
			t.Errorf("yealink lacks %q:\n%s", want, y)
		}
	}
}

// hostile values try to start keys of their own and to leave the XML
// attribute.
var hostile = []string{
	"Ann\naccount.1.sip_server.1.address = evil.example",
	"Ann\r\naccount.2.password = x",
	"Ann\u2028account.3.enable = 1",
	`Ann" reg.1.server.1.address="evil.example`,
	"Ann'/><reg reg.9.address=\"x\"/><x a='",
	"Ann &amp; <Co>\x00\x1b",
}

// TestInjection: whatever a display name, label or key value holds, the
// Yealink file has exactly the keys rendered (one per line, none from the
// value) and the Polycom file parses with the values intact as attributes.
func TestInjection(t *testing.T) {
	for _, h := range hostile {
		d := device("yealink")
		d.Lines[0].DisplayName, d.Lines[0].Label, d.Keys[0].Label = h, h, h
		y, _, err := Render(d, "main")
		if err != nil {
			t.Fatal(err)
		}
		clean, _, _ := Render(device("yealink"), "main")
		if strings.Count(string(y), "\n") != strings.Count(string(clean), "\n") {
			t.Errorf("%q changed the number of lines:\n%s", h, y)
		}
		keys := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(y)), "\n")[1:] {
			key, val, _ := strings.Cut(line, " = ")
			if _, dup := keys[key]; dup || !strings.Contains(string(clean), "\n"+key+" = ") {
				t.Errorf("%q produced the key %q again or anew", h, key)
			}
			keys[key] = val
		}
		if keys["account.1.sip_server.1.address"] != "sip.example.com" || keys["account.2.password"] != "s3cret-1002-pass" || keys["account.3.enable"] != "" {
			t.Errorf("%q changed other keys: %v", h, keys)
		}

		d.Vendor = "polycom"
		p, _, err := Render(d, "phone")
		if err != nil {
			t.Fatal(err)
		}
		var cfg struct {
			Reg struct {
				Attrs []xml.Attr `xml:",any,attr"`
			} `xml:"reg"`
			Extra []struct {
				XMLName xml.Name
			} `xml:",any"`
		}
		if err := xml.Unmarshal(p, &cfg); err != nil {
			t.Fatalf("%q: the file does not parse: %v\n%s", h, err, p)
		}
		attrs := map[string]string{}
		for _, a := range cfg.Reg.Attrs {
			attrs[a.Name.Local] = a.Value
		}
		if len(cfg.Reg.Attrs) != 14 || attrs["reg.1.server.1.address"] != "sip.example.com" || attrs["reg.9.address"] != "" {
			t.Errorf("%q changed the reg attributes: %v", h, attrs)
		}
		want := polycomValue(h)
		if attrs["reg.1.displayName"] != strings.ReplaceAll(want, "\r\n", "\n") && attrs["reg.1.displayName"] != want {
			t.Errorf("%q: displayName reads back %q", h, attrs["reg.1.displayName"])
		}
		for _, e := range cfg.Extra {
			if e.XMLName.Local != "reg" && e.XMLName.Local != "attendant" {
				t.Errorf("%q added the element %s", h, e.XMLName.Local)
			}
		}
	}
}

func TestFileMAC(t *testing.T) {
	for in, want := range map[string][2]string{
		"0015651A2B3C.cfg":       {"0015651a2b3c", "main"},
		"00-15-65-1a-2b-3c.cfg":  {"0015651a2b3c", "main"},
		"0015651a2b3c-phone.cfg": {"0015651a2b3c", "phone"},
		"0015651a2b3.cfg":        {"", "main"},
		"0015651a2b3c.xml":       {"", ""},
		"../0015651a2b3c.cfg":    {"", "main"},
	} {
		mac, kind := FileMAC(in)
		if mac != want[0] || (mac != "" && kind != want[1]) {
			t.Errorf("FileMAC(%q) = %q, %q; want %v", in, mac, kind, want)
		}
	}
}

package provision

import (
	"encoding/xml"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzProvisioning puts one string in every field of a device, its lines
// and keys (display names, labels, users, passwords, key types and values,
// a park key's value, the server, the MAC) and renders each vendor's files. Yealink: exactly
// the lines and keys the clean device has, each value on its one line with
// no control character; Polycom: well-formed XML with only the elements
// and attributes the renderer writes, each value intact as its attribute.
func FuzzProvisioning(f *testing.F) {
	for _, h := range hostile {
		f.Add(h)
	}
	for _, s := range []string{"", "plain", "\u2028\u2029\u0085", "\xff\xfe", "]]><!--", `"'<>&`, "\uFFFE", "a = b\nc = d", "%{x}$${y}"} {
		f.Add(s)
	}
	clean, _, err := Render(device("yealink"), "main")
	if err != nil {
		f.Fatal(err)
	}
	cleanKeys := yealinkKeys(f, clean)
	f.Fuzz(func(t *testing.T, s string) {
		d := device("yealink")
		d.Model, d.Label, d.Server = s, s, s
		for i := range d.Lines {
			l := &d.Lines[i]
			l.User, l.Password, l.DisplayName, l.Label = s, s, s, s
		}
		d.Keys = append(d.Keys, Key{Position: 3, Type: s, Value: s, Label: s}, Key{Position: 4, Type: "park", Value: s, Label: s})
		for i := range d.Keys {
			d.Keys[i].Value, d.Keys[i].Label = s, s
		}
		y, _, err := Render(d, "main")
		if err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(y) {
			t.Fatalf("yealink file is not UTF-8: %q", y)
		}
		keys := yealinkKeys(t, y)
		if len(keys) != len(cleanKeys)+8 {
			t.Fatalf("%d keys, want %d:\n%s", len(keys), len(cleanKeys)+8, y)
		}
		for k, v := range keys {
			if _, ok := cleanKeys[k]; !ok && !strings.HasPrefix(k, "linekey.3.") && !strings.HasPrefix(k, "linekey.4.") {
				t.Fatalf("key %q injected:\n%s", k, y)
			}
			if strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' || r == '\u0085' }) {
				t.Fatalf("key %s carries a line break or control character: %q", k, v)
			}
		}
		if want := yealinkValue(s); utf8.ValidString(s) && keys["account.1.password"] != want {
			t.Fatalf("password %q, want %q", keys["account.1.password"], want)
		}

		d.Vendor, d.MAC = "polycom", s
		for _, kind := range []string{"main", "phone"} {
			p, _, err := Render(d, kind)
			if err != nil {
				t.Fatal(err)
			}
			checkPolycom(t, p, kind, s)
		}
	})
}

// yealinkKeys reads a Yealink file's "key = value" lines (after the
// version line), failing on a repeated key or a line of another form.
func yealinkKeys(t testing.TB, b []byte) map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if lines[0] != "#!version:1.0.0.1" {
		t.Fatalf("first line %q", lines[0])
	}
	out := map[string]string{}
	for _, line := range lines[1:] {
		k, v, ok := strings.Cut(line, " = ")
		if _, dup := out[k]; !ok || dup || k == "" || strings.ContainsAny(k, " \t") {
			t.Fatalf("line %q", line)
		}
		out[k] = v
	}
	return out
}

// checkPolycom: the file parses, holds only <APPLICATION> (main) or
// <polycomConfig> with <reg> and <attendant> (phone), and every value a
// field gave comes back as written (less what XML cannot carry).
func checkPolycom(t *testing.T, doc []byte, kind, s string) {
	t.Helper()
	type el struct {
		XMLName  xml.Name
		Attrs    []xml.Attr `xml:",any,attr"`
		Children []el       `xml:",any"`
	}
	var root el
	if err := xml.Unmarshal(doc, &root); err != nil {
		t.Fatalf("polycom %s does not parse: %v\n%s", kind, err, doc)
	}
	want := polycomValue(s)
	if kind == "main" {
		if root.XMLName.Local != "APPLICATION" || len(root.Children) != 0 || len(root.Attrs) != 2 {
			t.Fatalf("master file %s", doc)
		}
		return
	}
	if root.XMLName.Local != "polycomConfig" || len(root.Attrs) != 0 || len(root.Children) != 2 {
		t.Fatalf("phone file %s", doc)
	}
	for _, c := range root.Children {
		if c.XMLName.Local != "reg" && c.XMLName.Local != "attendant" || len(c.Children) != 0 {
			t.Fatalf("element %s injected:\n%s", c.XMLName.Local, doc)
		}
		for _, a := range c.Attrs {
			if !strings.HasPrefix(a.Name.Local, c.XMLName.Local+".") && !(c.XMLName.Local == "attendant" && strings.HasPrefix(a.Name.Local, "attendant.resourceList.")) {
				t.Fatalf("attribute %s injected on %s", a.Name.Local, c.XMLName.Local)
			}
			// Every attribute but the types (ours) is s; a park key naming
			// a slot watches park+<slot>.
			parkAddress := strings.HasSuffix(a.Name.Local, ".address") && parkSlot(Key{Type: "park", Value: s}) != "" && a.Value == "park+"+s
			if !strings.HasSuffix(a.Name.Local, ".type") && utf8.ValidString(s) && a.Value != want && !parkAddress {
				t.Fatalf("%s reads back %q, want %q", a.Name.Local, a.Value, want)
			}
		}
	}
	if n := len(root.Children[0].Attrs); root.Children[0].XMLName.Local != "reg" || n != 14 {
		t.Fatalf("reg has %d attributes", n)
	}
}

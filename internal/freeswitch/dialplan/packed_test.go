package dialplan

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/switchboard/switchboard/internal/freeswitch/naming"
)

// filledExtension sets every field of an Extension, found by reflection,
// to a value of its own derived from seed, and the seed-th field, when it
// is a flag, alone to true: a field added to Extension and forgotten by
// packed.go, or two fields mixed up, change what comes back.
func filledExtension(seed int) Extension {
	var x Extension
	n := 0
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		for i := range v.NumField() {
			f := v.Field(i)
			n++
			switch f.Kind() {
			case reflect.String:
				f.SetString(fmt.Sprintf("%s-%d-%d", v.Type().Field(i).Name, seed, n))
			case reflect.Bool:
				f.SetBool(n == seed)
			case reflect.Int, reflect.Int32, reflect.Int64:
				f.SetInt(int64(seed*100 + n))
			case reflect.Struct:
				fill(f)
			default:
				panic("filledExtension: a field of kind " + f.Kind().String())
			}
		}
	}
	fill(reflect.ValueOf(&x).Elem())
	return x
}

func TestPackedExtensionsRoundTrip(t *testing.T) {
	exts := []Extension{{Name: "1003"}}
	for seed := 1; seed <= reflect.TypeOf(Extension{}).NumField()+8; seed++ {
		exts = append(exts, filledExtension(seed))
	}
	exts = append(exts, filledExtension(1)) // a duplicate name: a lookup finds the first
	p, ok := packExtensions(exts)
	if !ok {
		t.Fatal("not packed")
	}
	for i := range exts {
		var x Extension
		p.unpack(i, &x)
		if !reflect.DeepEqual(x, exts[i]) {
			t.Errorf("extension %d comes back as\n%+v\nwant\n%+v", i, x, exts[i])
		}
	}
	for _, name := range []string{exts[1].Name, exts[2].Name, "1003"} {
		if i, ok := p.find(name); !ok || exts[i].Name != name || name == exts[1].Name && i != 1 {
			t.Errorf("find(%q) = %d, %v", name, i, ok)
		}
	}
	if _, ok := p.find("nope"); ok {
		t.Error("found an extension that is not there")
	}
	// The collector must not have to scan the records: no pointer in them.
	rt := reflect.TypeOf(packedExt{})
	for i := range rt.NumField() {
		switch k := rt.Field(i).Type.Kind(); k {
		case reflect.Int64, reflect.Int32, reflect.Uint32, reflect.Uint16, reflect.Array:
		default:
			t.Errorf("packedExt.%s is a %s", rt.Field(i).Name, k)
		}
	}
	if got := unsafe.Sizeof(packedExt{}); got != 72 {
		t.Errorf("a packed record is %d bytes; want 72", got)
	}
}

// A prepared snapshot holds its extensions packed; every render that reads
// them (a user, group_call's pointers, the dial-by-name directory, an IVR's
// direct dial) answers exactly as from the structs.
func TestPackedSnapshotRendersTheSame(t *testing.T) {
	plain := loadSnap(t)
	prepared := loadSnap(t)
	prepared.Prepare()
	if prepared.Extensions != nil || prepared.ExtensionCount() != len(plain.Extensions) {
		t.Fatalf("prepared snapshot holds %d structs, %d extensions; want 0 and %d", len(prepared.Extensions), prepared.ExtensionCount(), len(plain.Extensions))
	}
	reqs := []struct {
		name string
		kv   []string
	}{
		{"group_call", []string{"user", "", "action", "group_call", "group", "acme", "group_name", "acme"}},
		{"dial-by-name", []string{"user", "", "key_value", naming.DirectoryDomain("acme"), "domain", naming.DirectoryDomain("acme")}},
	}
	for _, x := range plain.Extensions {
		reqs = append(reqs, struct {
			name string
			kv   []string
		}{x.Name, []string{"user", naming.UserID("acme", x.Name)}})
	}
	for _, r := range reqs {
		want := Directory(testOpts, dirRequest(t, "009", r.kv...), plain)
		if got := Directory(testOpts, dirRequest(t, "009", r.kv...), prepared); !bytes.Equal(got, want) {
			t.Errorf("%s: packed renders\n%s\nwant\n%s", r.name, got, want)
		}
	}
	for i := range plain.IVRMenus {
		m := &plain.IVRMenus[i]
		m.DirectDial = true
		prepared.IVRMenus[i].DirectDial = true
		e1, n1 := directDialExpr(plain, m)
		e2, n2 := directDialExpr(prepared, &prepared.IVRMenus[i])
		if e1 != e2 || n1 != n2 || e1 == "" {
			t.Errorf("menu %s direct dial: packed %q %d, structs %q %d", m.Name, e2, n2, e1, n1)
		}
	}
	if len(plain.IVRMenus) == 0 {
		t.Fatal("the fixture has no IVR menu")
	}
}

// An extension whose values exceed what a record addresses (64 KiB) keeps
// the snapshot's extensions as structs, found by name as before.
func TestUnpackableExtensionsStayStructs(t *testing.T) {
	snap := loadSnap(t)
	snap.Extensions[1].FirstName = strings.Repeat("a", 70000)
	name := snap.Extensions[1].Name
	snap.Prepare()
	if snap.Extensions == nil {
		t.Fatal("packed an extension of 70,000 bytes")
	}
	if x := snap.ExtensionNamed(name); x == nil || len(x.FirstName) != 70000 {
		t.Fatalf("extension %s not found after Prepare", name)
	}
}

// Issue 28: packed extensions copied out as blocks and set into a new
// snapshot (a model restored from fsxml's file after a restart) are the
// same extensions, found by name as before; damaged blocks are refused.
func TestExtensionBlocksRoundTrip(t *testing.T) {
	orig := loadSnap(t)
	want := orig.ExtensionList()
	orig.Prepare()
	b, ok := orig.ExtensionBlocks()
	if !ok {
		t.Fatal("a prepared snapshot gives no blocks")
	}
	restored := loadSnap(t)
	restored.Extensions = nil
	if err := restored.SetExtensionBlocks(ExtensionBlocks{Text: strings.Clone(b.Text), Records: bytes.Clone(b.Records), ByName: bytes.Clone(b.ByName)}); err != nil {
		t.Fatal(err)
	}
	restored.Prepare()
	if got := restored.ExtensionList(); !reflect.DeepEqual(got, want) {
		t.Fatalf("restored extensions\n%+v\nwant\n%+v", got, want)
	}
	for _, x := range want {
		if got := restored.ExtensionNamed(x.Name); got == nil || got.SIPSecret != x.SIPSecret {
			t.Fatalf("extension %s not found by name after the restore", x.Name)
		}
	}

	damage := map[string]func(b *ExtensionBlocks){
		"text cut short":        func(b *ExtensionBlocks) { b.Text = b.Text[:len(b.Text)-1] },
		"a record cut short":    func(b *ExtensionBlocks) { b.Records = b.Records[:len(b.Records)-1] },
		"index of another":      func(b *ExtensionBlocks) { b.ByName = b.ByName[4:] },
		"index out of range":    func(b *ExtensionBlocks) { copy(b.ByName, []byte{0xff, 0xff, 0xff, 0x7f}) },
		"index with a repeat":   func(b *ExtensionBlocks) { copy(b.ByName[4:8], b.ByName[0:4]) },
		"a string past the end": func(b *ExtensionBlocks) { b.Records[len(b.Records)-72+19] = 0xff },
	}
	for what, f := range damage {
		c := ExtensionBlocks{Text: b.Text, Records: bytes.Clone(b.Records), ByName: bytes.Clone(b.ByName)}
		f(&c)
		s := loadSnap(t)
		s.Extensions = nil
		if err := s.SetExtensionBlocks(c); err == nil {
			t.Errorf("%s: accepted", what)
		}
	}
}

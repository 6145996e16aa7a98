package provision

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"

	"github.com/switchboard/switchboard/internal/freeswitch/naming"
)

// polycomMaster renders <mac>.cfg, the master file naming the files the
// phone loads next: its own <mac>-phone.cfg.
func polycomMaster(d Device) ([]byte, error) {
	return polycomXML("APPLICATION", []xml.Attr{
		{Name: xml.Name{Local: "APP_FILE_PATH"}, Value: "sip.ld"},
		{Name: xml.Name{Local: "CONFIG_FILES"}, Value: d.MAC + "-phone.cfg"},
	}, nil)
}

// Polycom attendant (BLF) keys are the key types Polycom maps directly,
// with park keys naming a slot of the lot (park+<slot>); the rest are not
// rendered.
var polycomAttendant = map[string]bool{"blf": true}

// polycomPhone renders <mac>-phone.cfg: <polycomConfig> with reg.N.*
// attributes per line and attendant.resourceList.N.* for BLF keys.
func polycomPhone(d Device) ([]byte, error) {
	var reg, att []xml.Attr
	a := func(list *[]xml.Attr, name string, v any) {
		*list = append(*list, xml.Attr{Name: xml.Name{Local: name}, Value: polycomValue(fmt.Sprint(v))})
	}
	for _, l := range d.Lines {
		p := fmt.Sprintf("reg.%d.", l.Index)
		a(&reg, p+"displayName", l.DisplayName)
		a(&reg, p+"label", firstNonEmpty(l.Label, l.DisplayName, l.User))
		a(&reg, p+"address", l.User)
		a(&reg, p+"auth.userId", l.User)
		a(&reg, p+"auth.password", l.Password)
		a(&reg, p+"server.1.address", d.Server)
		typ := "private"
		if l.Shared {
			typ = "shared"
		}
		a(&reg, p+"type", typ)
	}
	n := 0
	for _, k := range d.Keys {
		address, label := k.Value, k.Label
		if slot := parkSlot(k); slot != "" {
			// A park slot is watched on valet's presence for it.
			address, label = naming.ParkPresencePrefix+slot, parkKeyLabel(k, slot)
		} else if !polycomAttendant[k.Type] {
			continue
		}
		n++
		p := fmt.Sprintf("attendant.resourceList.%d.", n)
		a(&att, p+"address", address)
		a(&att, p+"label", label)
		a(&att, p+"type", "normal")
	}
	children := []xmlElement{{"reg", reg}}
	if len(att) > 0 {
		children = append(children, xmlElement{"attendant", att})
	}
	return polycomXML("polycomConfig", nil, children)
}

type xmlElement struct {
	name  string
	attrs []xml.Attr
}

// polycomXML writes one root element with attributes and empty children
// through encoding/xml, which escapes every attribute value (quotes, <, &,
// and line breaks as character references).
func polycomXML(root string, attrs []xml.Attr, children []xmlElement) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n")
	enc := xml.NewEncoder(&buf)
	enc.Indent("", "  ")
	start := xml.StartElement{Name: xml.Name{Local: root}, Attr: attrs}
	if err := enc.EncodeToken(start); err != nil {
		return nil, fmt.Errorf("polycom %s: %w", root, err)
	}
	for _, c := range children {
		el := xml.StartElement{Name: xml.Name{Local: c.name}, Attr: c.attrs}
		if err := enc.EncodeToken(el); err != nil {
			return nil, fmt.Errorf("polycom %s: %w", c.name, err)
		}
		if err := enc.EncodeToken(el.End()); err != nil {
			return nil, fmt.Errorf("polycom %s: %w", c.name, err)
		}
	}
	if err := enc.EncodeToken(start.End()); err != nil {
		return nil, fmt.Errorf("polycom %s: %w", root, err)
	}
	if err := enc.Flush(); err != nil {
		return nil, fmt.Errorf("polycom %s: %w", root, err)
	}
	buf.WriteString("\n")
	return buf.Bytes(), nil
}

// polycomValue drops the control characters XML 1.0 cannot carry even as
// references; encoding/xml escapes the rest.
func polycomValue(v string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0xfffe || r == 0xffff {
			return -1
		}
		return r
	}, v)
}

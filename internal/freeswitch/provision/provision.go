// Package provision renders desk-phone configuration files (Yealink,
// Poly/Polycom) from a device snapshot: pure rendering, no I/O. Every value
// from users is escaped for its format, so a display name can neither start
// a new key (Yealink's line-based key = value files) nor leave its XML
// attribute (Polycom).
package provision

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/switchboard/switchboard/internal/freeswitch/naming"
)

// Device is what a phone's files are rendered from: the managed device and
// the SIP accounts of its lines (only its own).
type Device struct {
	MAC    string // 12 lower-case hex digits
	Vendor string
	Model  string
	Label  string
	// Server is the SIP domain the phones register to.
	Server string
	Lines  []Line
	Keys   []Key
}

// Line is one SIP account on the phone (a device line and its extension's
// directory user).
type Line struct {
	Index       int
	User        string // <ext>-<tenant>: the directory user and auth name
	Password    string
	DisplayName string
	Label       string
	Shared      bool
}

// Key is one programmable key.
type Key struct {
	Position int
	Type     string // blf, speed_dial, line, park, dnd, office_mode
	// Value is the number a key watches or dials; for a park key a slot
	// of the tenant's lot (see parkSlot) or the park code.
	Value string
	Label string
}

// parkSlot answers the slot a park key's value names ("" when it names
// none): a number in the tenant's valet lot (naming.ParkSlotMin…Max). Such
// a key is a BLF on valet's park+<slot> presence; pressed idle it dials
// park+<slot>, which retrieves the call parked there, and pressed during a
// call it transfers the call into the slot. Any other value keeps the
// vendor's park key (a transfer to the value, such as the park code).
func parkSlot(k Key) string {
	if k.Type != "park" {
		return ""
	}
	n, err := strconv.Atoi(k.Value)
	if err != nil || strconv.Itoa(n) != k.Value || n < naming.ParkSlotMin || n > naming.ParkSlotMax {
		return ""
	}
	return k.Value
}

// parkKeyLabel is a slot key's label: its own, else "Park <slot>".
func parkKeyLabel(k Key, slot string) string {
	return firstNonEmpty(k.Label, "Park "+slot)
}

// ErrNoFile means the vendor has no such file for a device.
var ErrNoFile = errors.New("no such provisioning file")

var macRE = regexp.MustCompile(`^[0-9a-f]{12}$`)

// NormaliseMAC answers a MAC as 12 lower-case hex digits (separators ":",
// "-" and "." stripped), or "" when it is not one.
func NormaliseMAC(s string) string {
	m := strings.ToLower(strings.NewReplacer(":", "", "-", "", ".", "").Replace(s))
	if !macRE.MatchString(m) {
		return ""
	}
	return m
}

// FileMAC splits a requested file name into the device's MAC and the file
// kind the vendors name: "<mac>.cfg" (Yealink's device file, Polycom's
// master file) and "<mac>-phone.cfg" (Polycom's per-phone settings).
func FileMAC(name string) (mac, kind string) {
	base, ok := strings.CutSuffix(name, ".cfg")
	if !ok {
		return "", ""
	}
	kind = "main"
	if b, phone := strings.CutSuffix(base, "-phone"); phone {
		base, kind = b, "phone"
	}
	return NormaliseMAC(base), kind
}

// Render answers the file of kind for d, with its content type.
func Render(d Device, kind string) ([]byte, string, error) {
	switch {
	case d.Vendor == "yealink" && kind == "main":
		return yealink(d), "text/plain; charset=utf-8", nil
	case d.Vendor == "polycom" && kind == "main":
		b, err := polycomMaster(d)
		return b, "application/xml", err
	case d.Vendor == "polycom" && kind == "phone":
		b, err := polycomPhone(d)
		return b, "application/xml", err
	}
	return nil, "", fmt.Errorf("%s %s: %w", d.Vendor, kind, ErrNoFile)
}

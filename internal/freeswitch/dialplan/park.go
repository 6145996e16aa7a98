package dialplan

import (
	"strings"

	"github.com/switchboard/switchboard/internal/freeswitch/naming"
)

// Call parking (the park feature, resources.md §2.11) is mod_valet_parking's.
// Each tenant has one lot, naming.ParkLot; its slots are naming.ParkSlotMin…naming.ParkSlotMax.
//
//   - The park code alone (*70, dialled or a blind transfer target) runs
//     "valet_park <lot> auto in <min> <max>": the caller takes the first
//     free slot, hears its number (valet's valet_announce_ext phrase) and
//     waits on hold music.
//   - The code followed by a slot (*705), or "park+<slot>" (what a phone
//     dials when its slot BLF key is pressed), runs "valet_park <lot>
//     <slot>": valet bridges the caller to the call parked there, or, when
//     the slot is empty, parks the caller in it (a blind transfer to *705
//     parks the call in slot 5).
//   - A parked call whose caller was last put through to one of the
//     tenant's extensions (sb_called_ext, set on every extension call) goes
//     back to that extension after ParkTimeout seconds: valet transfers it to
//     "park-return-<ext>" (valet_parking_orbit_exten) in the tenant context,
//     which rings the extension as a normal call (its voicemail or forwards
//     then apply). Other parked calls wait until they are picked up or hang up.
//
// Valet lots are held in each node's memory: a parked call can be picked up
// only through the node it is parked on.
const (
	// ParkTimeout is how long a call waits in its slot before it goes back
	// to the extension that parked it (valet_parking_timeout, seconds).
	ParkTimeout = 120
	// parkReturnPrefix marks the internal number a timed-out parked call is
	// transferred to; it contains a '-': no number-plan object collides.
	parkReturnPrefix = "park-return-"
)

// validParkSlot is a slot number of a lot as valet writes it (%d, so no
// leading zero) within naming.ParkSlotMin…naming.ParkSlotMax.
func validParkSlot(s string) bool {
	if len(s) == 0 || len(s) > 3 || s[0] == '0' || !allIn(s, "0123456789") {
		return false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n >= naming.ParkSlotMin && n <= naming.ParkSlotMax
}

// parkFeature is the tenant's enabled park feature code, or nil.
func (p *planner) parkFeature() *FeatureExtension {
	for i := range p.snap.FeatureExtensions {
		f := &p.snap.FeatureExtensions[i]
		if f.Feature == "park" && f.Enabled && validCode(f.Code) {
			return f
		}
	}
	return nil
}

// parkExt renders the park extension for number: slot "" parks in the first
// free slot, a slot parks in or retrieves from that slot; nil for a slot
// that is not one of the lot's. The first condition matches the number;
// the second arms the timeout only when the call was put through to one of
// our extensions (sb_called_ext is ours: the extension's number, set by
// extensionActions, never user text); the third always parks.
func (p *planner) parkExt(name, number, slot string) *ext {
	lot := naming.ParkLot(p.tenant, p.opts.Domain)
	data := lot + " auto in " + itoa(naming.ParkSlotMin) + " " + itoa(naming.ParkSlotMax)
	if slot != "" {
		if !validParkSlot(slot) {
			return nil
		}
		data = lot + " " + slot
	}
	return &ext{name: name, conds: []cond{
		{field: "destination_number", expr: numberExpr(number)},
		{field: "${sb_called_ext}", expr: `^[0-9]{2,10}$`, brk: "never", actions: []action{
			set("valet_parking_timeout", itoa(ParkTimeout)),
			set("valet_parking_orbit_exten", parkReturnPrefix+"${sb_called_ext}"),
			set("valet_parking_orbit_dialplan", "XML"),
			set("valet_parking_orbit_context", p.tenant),
		}},
		{actions: []action{act("answer", ""), act("valet_park", data), act("hangup", "NORMAL_CLEARING")}},
	}}
}

// parkPresenceDial renders "park+<slot>", dialled by a phone's slot BLF key:
// the same as the park code followed by the slot, while parking is enabled.
func (p *planner) parkPresenceDial(num string) *ext {
	if p.parkFeature() == nil {
		p.trace.Reason = "park disabled"
		return nil
	}
	slot := strings.TrimPrefix(num, naming.ParkPresencePrefix)
	if slot == "" {
		return nil
	}
	e := p.parkExt("park", num, slot)
	if e != nil {
		p.trace.Match, p.trace.Feature = "feature", "park"
	}
	return e
}

// parkReturn renders "park-return-<ext>": a parked call that timed out
// rings the extension that parked it, while that extension exists and is
// enabled.
func (p *planner) parkReturn(num string) *ext {
	x := p.snap.extension(num)
	if !validNumber(num) || x == nil || !x.Enabled {
		return nil
	}
	p.trace.Match = "park_return"
	return single(parkReturnPrefix+num, parkReturnPrefix+num, []action{p.transfer(num)})
}

// DestinationExtension is the extension an internal number acts on
// ("fail-<ext>", "park-return-<ext>"), else number itself: the loader reads
// that extension for the render.
func DestinationExtension(number string) string {
	for _, prefix := range []string{failPrefix, parkReturnPrefix} {
		if rest, ok := strings.CutPrefix(number, prefix); ok {
			return rest
		}
	}
	return number
}

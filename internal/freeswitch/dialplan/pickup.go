package dialplan

import (
	"slices"
	"strings"
)

// Pickup groups (resources.md §2.5). FreeSWITCH's mod_dptools keeps, per
// pickup key, the calls ringing a "pickup/<key>" leg; the pickup
// application answers the oldest of them. Every call to a member extension
// therefore also rings pickup/<tenant>_<group> (one leg per enabled group),
// and the group-pickup code runs "pickup <tenant>_<group>" for the
// picker's groups. The key carries the tenant, so two tenants' groups of
// the same name never share calls.
//
// Directed pickup (**<ext>) cannot use a key: it needs the call ringing at
// one extension now. The renderer's caller looks that up in the live-call
// tracker (WithRinging) and the render intercepts it, after checking that
// the picker picks for a group the target is a member of.

// errorTone is played before a refused feature hangs up.
const errorTone = "tone_stream://%(500,500,480,620);loops=3"

// pickupKey is the mod_dptools pickup key of a tenant's group, or "" when
// a part is not safe in a dial string.
func pickupKey(tenant, group string) string {
	if !validTenant(tenant) || len(group) < 1 || len(group) > 32 || !allIn(group, "abcdefghijklmnopqrstuvwxyz0123456789_") {
		return ""
	}
	return tenant + "_" + group
}

// pickers are who may pick up the group's calls: its pickers, else its
// members.
func (g *PickupGroup) pickers() []string {
	if len(g.Pickers) > 0 {
		return g.Pickers
	}
	return g.Members
}

// pickupLegs are the pickup endpoint legs a call to extension ext also
// rings: one per enabled group it is a member of.
func (p *planner) pickupLegs(ext string) []string {
	var legs []string
	for i := range p.snap.PickupGroups {
		g := &p.snap.PickupGroups[i]
		if !g.Enabled || !slices.Contains(g.Members, ext) {
			continue
		}
		if key := pickupKey(p.tenant, g.Name); key != "" {
			legs = append(legs, "pickup/"+key)
		}
	}
	return legs
}

// picker is the calling extension of this tenant (sb_ext, set by our
// directory on the user), or "" when the call is not from one.
func (p *planner) picker() string {
	p.trace.CallerDependent = true
	ext := p.req.Ext
	if !strings.EqualFold(p.req.Tenant, p.tenant) || !validNumber(ext) {
		return ""
	}
	if x := p.snap.extension(ext); x == nil || !x.Enabled {
		return ""
	}
	return ext
}

// refuse answers, plays the error tone and hangs up: a feature the caller
// may not use, or that has nothing to act on, ends clearly, never by
// matching something else.
func (p *planner) refuse(reason string) []action {
	p.trace.Reason = reason
	return []action{act("answer", ""), act("playback", errorTone), act("hangup", "NORMAL_CLEARING")}
}

// groupPickupActions picks up a call ringing in any of the picker's groups.
func (p *planner) groupPickupActions() []action {
	picker := p.picker()
	if picker == "" {
		return p.refuse("pickup: caller is not an extension of the tenant")
	}
	var acts []action
	for i := range p.snap.PickupGroups {
		g := &p.snap.PickupGroups[i]
		if !g.Enabled || !slices.Contains(g.pickers(), picker) {
			continue
		}
		if key := pickupKey(p.tenant, g.Name); key != "" {
			acts = append(acts, act("pickup", key))
		}
	}
	if acts == nil {
		return p.refuse("pickup: caller is in no pickup group")
	}
	// A pickup that found no call returns; the next group is tried, and
	// the caller hears the error tone when none had one.
	return append(acts, act("playback", errorTone), act("hangup", "NORMAL_CLEARING"))
}

// mayPickUp reports whether picker picks up for a group target is a member
// of.
func (p *planner) mayPickUp(picker, target string) bool {
	for i := range p.snap.PickupGroups {
		g := &p.snap.PickupGroups[i]
		if g.Enabled && pickupKey(p.tenant, g.Name) != "" && slices.Contains(g.Members, target) && slices.Contains(g.pickers(), picker) {
			return true
		}
	}
	return false
}

// RingingCall is a live channel ringing at an extension, from the
// live-call tracker: the ringing leg's UUID, the call's first leg (the
// caller) and the node it is on.
type RingingCall struct {
	UUID     string
	CallUUID string
	Node     string
}

// ringingAt is what WithRinging attached: the calls ringing at ext.
type ringingAt struct {
	ext   string
	calls []RingingCall
}

// WithRinging returns a shallow copy of snap that knows the calls ringing
// at extension ext now, for a directed pickup render. The original is not
// modified.
func (s *TenantSnapshot) WithRinging(ext string, calls []RingingCall) *TenantSnapshot {
	c := *s
	c.ringing = &ringingAt{ext: ext, calls: calls}
	return &c
}

// DirectedPickupTarget is the extension a dialled number asks to pick up
// with the tenant's enabled directed-pickup code, if it is one. The
// renderer's caller reads that extension's ringing calls (WithRinging)
// before rendering.
func DirectedPickupTarget(snap *TenantSnapshot, number string) (string, bool) {
	if snap == nil {
		return "", false
	}
	for i := range snap.FeatureExtensions {
		f := &snap.FeatureExtensions[i]
		if f.Feature != "directed_pickup" || !f.Enabled || !validFeatureCode(f.Code, f.Feature) {
			continue
		}
		if ext, ok := strings.CutPrefix(number, f.Code); ok && validNumber(ext) {
			return ext, true
		}
	}
	return "", false
}

// validUUID matches the channel UUIDs FreeSWITCH makes: hex and '-'.
func validUUID(s string) bool {
	return len(s) >= 8 && len(s) <= 64 && allIn(s, "0123456789abcdefABCDEF-")
}

// directedPickupActions intercepts the call ringing at target: the caller's
// leg when the tracker knows it (the ringing leg is then hung up), else the
// ringing leg's partner (-bleg). Refused when the picker may not pick up
// that extension or nothing rings there. Only UUIDs of the tenant's own
// channels (the tracker's per-tenant index) reach the render, and they are
// checked to be UUIDs: no caller data forms the action.
func (p *planner) directedPickupActions(target string) []action {
	p.trace.LiveDependent = true
	picker := p.picker()
	if picker == "" || !p.mayPickUp(picker, target) {
		return p.refuse("directed pickup: not allowed for this caller")
	}
	r := p.snap.ringing
	if r == nil || r.ext != target {
		return p.refuse("directed pickup: no call ringing")
	}
	for _, c := range r.calls {
		switch {
		case validUUID(c.CallUUID) && c.CallUUID != c.UUID:
			return []action{act("intercept", c.CallUUID), act("playback", errorTone), act("hangup", "NORMAL_CLEARING")}
		case validUUID(c.UUID):
			return []action{act("intercept", "-bleg "+c.UUID), act("playback", errorTone), act("hangup", "NORMAL_CLEARING")}
		}
	}
	return p.refuse("directed pickup: no call ringing")
}

package dialplan

import (
	"math/rand/v2"
	"strings"

	"github.com/switchboard/switchboard/internal/freeswitch/naming"
)

// Hunt groups (resources.md §2.4) render as one tenant-context extension
// that bridges a single dial string built here from validated parts only:
// member numbers pass validNumber/validDialable, timings are integers, and
// every variable name is ours.

func (s *TenantSnapshot) huntGroup(number string) *HuntGroup {
	for i := range s.HuntGroups {
		if s.HuntGroups[i].Number == number {
			return &s.HuntGroups[i]
		}
	}
	return nil
}

// huntSeparator joins member legs: ',' rings them together, '|' in turn
// (sequential, and random and round_robin, whose order huntOrder chose),
// ":_:" as an enterprise originate.
func (p *planner) huntSeparator(strategy string) string {
	switch strategy {
	case "", "simultaneous":
		return ","
	case "enterprise":
		return ":_:"
	}
	return "|"
}

// Random and round-robin groups ring their members one at a time, like
// sequential ones, in an order chosen for each call: a FreeSWITCH dial
// string has no shuffle or rotation of its own, and mod_xml_curl fetches
// the dialplan for every call, so the order is chosen when the call's
// dialplan is rendered. The render's caller gives the turn (WithHuntTurn):
// a random number for random, the group's call counter (kept in Redis,
// shared by every replica and node) for round_robin. Such a render is
// LiveDependent: never cached.

// huntTurn is the turn WithHuntTurn attached for one group.
type huntTurn struct {
	group int64
	n     uint64
}

// HuntTurnGroup is the enabled hunt group number calls whose ring order
// is chosen per call (strategy random or round_robin): the render's caller
// gives it a turn (WithHuntTurn) before rendering.
func HuntTurnGroup(snap *TenantSnapshot, number string) (id int64, strategy string, ok bool) {
	if snap == nil {
		return 0, "", false
	}
	g := snap.huntGroup(number)
	if g == nil || !g.Enabled || (g.Strategy != "random" && g.Strategy != "round_robin") {
		return 0, "", false
	}
	return g.ID, g.Strategy, true
}

// WithHuntTurn returns a shallow copy of snap whose render of hunt group
// id uses turn n: the seed of a random group's shuffle, or the number of
// calls a round-robin group took before this one (its first member rings
// first at 0, the second at 1...). The original is not modified.
func (s *TenantSnapshot) WithHuntTurn(id int64, n uint64) *TenantSnapshot {
	c := *s
	c.huntTurn = &huntTurn{group: id, n: n}
	return &c
}

// huntOrder puts the dialable legs of a random or round-robin group in
// this call's order (others keep theirs).
func (p *planner) huntOrder(g *HuntGroup, legs []string) []string {
	if g.Strategy != "random" && g.Strategy != "round_robin" {
		return legs
	}
	p.trace.LiveDependent = true
	var n uint64
	if t := p.snap.huntTurn; t != nil && t.group == g.ID {
		n = t.n
	}
	out := make([]string, len(legs))
	if g.Strategy == "random" {
		// Fisher-Yates over PCG, whose output is fixed by its seed (the
		// library's Perm may change between Go releases).
		copy(out, legs)
		r := rand.NewPCG(n, uint64(g.ID))
		for i := len(out) - 1; i > 0; i-- {
			j := int(r.Uint64() % uint64(i+1))
			out[i], out[j] = out[j], out[i]
		}
		p.trace.Reason = "strategy random: members shuffled for this call"
		return out
	}
	start := int(n % uint64(len(legs)))
	copy(out, legs[start:])
	copy(out[len(legs)-start:], legs[:start])
	p.trace.Reason = "strategy round_robin: this call starts at member " + itoa(start+1) + " of " + itoa(len(legs))
	return out
}

// huntActions rings the group's members, then sends an unanswered call to
// the timeout destination (hangup when unset or invalid). It returns nil
// when no member can be dialled.
func (p *planner) huntActions(g *HuntGroup) []action {
	legs := make([]string, 0, len(g.Members))
	external := false
	for _, m := range g.Members {
		leg := p.huntLeg(g, m)
		if leg == "" {
			continue
		}
		external = external || m.Type == "external"
		legs = append(legs, leg)
	}
	if len(legs) == 0 {
		p.trace.Reason = "no dialable member"
		return nil
	}
	acts := []action{
		set("call_timeout", itoa(clampInt(g.RingSeconds, 5, 600, 30))),
		set("continue_on_fail", "true"),
		set("hangup_after_bridge", "true"),
		set("ignore_early_media", "true"),
		set("sb_hunt_group", g.Number),
	}
	if g.Ringback == "moh" {
		// hold_music is FreeSWITCH's own setting, not user data.
		acts = append(acts, set("ringback", "${hold_music}"))
	}
	if prefix := sanitizeName(g.CallerIDNamePrefix); prefix != "" {
		// Joined here as literal text, never through ${caller_id_name}:
		// the caller's name comes from the SIP From header.
		p.trace.CallerDependent = true
		name := sanitizeCallerName(p.callerName)
		acts = append(acts, set("effective_caller_id_name", neutraliseExpansion(strings.TrimSpace(prefix+" "+name))))
	}
	if external {
		// External members are dialled through the tenant context's
		// outbound routes on the group owner's behalf, as a forward is.
		acts = append(acts, act("export", "nolocal:toll_allow="+tollAllow("international")))
	}
	acts = append(acts, act("bridge", strings.Join(p.huntOrder(g, legs), p.huntSeparator(g.Strategy))))
	d := Destination{Type: "hangup"}
	if g.TimeoutDestination != nil && g.TimeoutDestination.Type != "" {
		d = *g.TimeoutDestination
	}
	after, ok := p.destination(d)
	if !ok {
		after = []action{act("hangup", "NO_ANSWER")}
	} else {
		p.trace.Destination = &d
	}
	return append(acts, after...)
}

// huntLeg is one member's leg with its own timeout and start delay, or ""
// when the member cannot be dialled (bad number, disabled extension).
func (p *planner) huntLeg(g *HuntGroup, m HuntMember) string {
	vars := "leg_timeout=" + itoa(clampInt(m.TimeoutSeconds, 5, 300, 20))
	if m.DelaySeconds > 0 {
		vars += ",leg_delay_start=" + itoa(clampInt(m.DelaySeconds, 0, 300, 0))
	}
	switch m.Type {
	case "extension":
		if !validNumber(m.Target) {
			return ""
		}
		if x := p.snap.extension(m.Target); x != nil && !x.Enabled {
			return ""
		}
		if g.RespectMemberForwarding {
			// Through the extension's own dialplan: DND and forwards apply.
			return "[" + vars + "]loopback/" + m.Target + "/" + p.tenant
		}
		return "[" + vars + "]user/" + naming.UserID(p.tenant, m.Target) + "@" + p.opts.Domain
	case "external":
		if !validDialable(m.Target) {
			return ""
		}
		if g.ConfirmExternal {
			vars += ",group_confirm_key=1,group_confirm_file=ivr/ivr-accept_reject_voicemail.wav"
		}
		return "[" + vars + "]loopback/" + m.Target + "/" + p.tenant
	}
	return ""
}

// clampInt is v within [lo, hi], or def when v is zero (unset).
func clampInt(v, lo, hi, def int) int {
	switch {
	case v == 0:
		return def
	case v < lo:
		return lo
	case v > hi:
		return hi
	}
	return v
}

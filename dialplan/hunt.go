package dialplan

import "strings"

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

// huntSeparator joins member legs: ',' rings them together, '|' in turn,
// ":_:" as an enterprise originate. random and round_robin have no
// FreeSWITCH dial-string form; they ring in the declared order, as
// sequential does (the trace says so).
func (p *planner) huntSeparator(strategy string) string {
	switch strategy {
	case "", "simultaneous":
		return ","
	case "enterprise":
		return ":_:"
	case "sequential":
		return "|"
	}
	p.trace.Reason = "strategy " + strategy + " rings in member order"
	return "|"
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
	acts = append(acts, act("bridge", strings.Join(legs, p.huntSeparator(g.Strategy))))
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
		return "[" + vars + "]user/" + m.Target + "-" + p.tenant + "@" + p.opts.Domain
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

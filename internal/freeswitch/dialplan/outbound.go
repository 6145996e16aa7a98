package dialplan

import (
	"strconv"

	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
)

// emergency routes the tenant's emergency numbers: always allowed, no limit,
// with the emergency caller id, through the emergency outbound route (else
// the first route by priority).
func (p *planner) emergency(req xmlcurl.Request, num string) *ext {
	if !hasString(p.snap.Tenant.EmergencyNumbers, num) {
		return nil
	}
	routes := p.snap.sortedOutbound()
	var route *OutboundRoute
	for _, r := range routes {
		if r.Emergency {
			route = r
			break
		}
	}
	if route == nil && len(routes) > 0 {
		route = routes[0]
	}
	p.trace.Match = "emergency"
	if route == nil {
		p.trace.Reason = "no outbound route for emergency call"
		return nil
	}
	dialled := num
	for _, pt := range route.Patterns {
		if pt.matches(num) {
			if d, ok := transform(pt, num); ok {
				dialled = d
				p.trace.Pattern = pt.Match
			}
			break
		}
	}
	trunks := p.usableTrunks(route)
	if len(trunks) == 0 {
		p.trace.Reason = "no usable trunk for emergency call"
		return nil
	}
	p.trace.RouteID, p.trace.RouteName = route.ID, route.Name
	acts := []action{set("sb_emergency", "true")}
	cid := p.emergencyCallerID(req)
	if cid != "" {
		acts = append(acts, set("effective_caller_id_number", cid))
	}
	acts = append(acts, p.bridges(trunks, dialled, cid, true)...)
	return single("emergency-"+num, num, acts)
}

// emergencyCallerID is the calling extension's emergency number (from our
// snapshot, via the sb_ext variable our directory set), else the tenant's.
func (p *planner) emergencyCallerID(req xmlcurl.Request) string {
	var x *Extension
	// Flagged before the caller's fields are looked at: whether a render
	// depends on the caller must not itself depend on the caller, or a
	// cache could hand one caller's answer to another.
	p.trace.CallerDependent = true
	if validNumber(req.Ext) && (req.Tenant == "" || req.Tenant == p.tenant) {
		x = p.snap.extension(req.Ext)
	}
	return p.snap.emergencyCallerID(x)
}

// outbound picks the first enabled route (by priority) with a pattern that
// matches and at least one usable trunk, and renders its bridge chain.
func (p *planner) outbound(req xmlcurl.Request, num string) *ext {
	for _, r := range p.snap.sortedOutbound() {
		for _, pt := range r.Patterns {
			if !pt.matches(num) {
				continue
			}
			dialled, ok := transform(pt, num)
			trunks := p.usableTrunks(r)
			if !ok || len(trunks) == 0 {
				continue
			}
			p.trace.Match, p.trace.RouteID, p.trace.RouteName = "outbound", r.ID, r.Name
			p.trace.Pattern, p.trace.Dialled = pt.Match, dialled
			return p.outboundExt(req, r, num, dialled, trunks)
		}
	}
	return nil
}

func (p *planner) outboundExt(req xmlcurl.Request, r *OutboundRoute, num, dialled string, trunks []string) *ext {
	acts, cid := p.callerID(req, r)
	if !r.Emergency && p.snap.Tenant.MaxConcurrentCalls > 0 {
		acts = append(acts, act("limit", "hash "+p.tenant+" outbound "+itoa(p.snap.Tenant.MaxConcurrentCalls)+" !USER_BUSY"))
	}
	if r.MaxDurationSeconds > 0 {
		acts = append(acts, act("sched_hangup", "+"+itoa(r.MaxDurationSeconds)+" ALLOTTED_TIMEOUT"))
	}
	acts = append(acts, p.bridges(trunks, dialled, cid, r.Emergency)...)
	name := r.Name
	if name == "" {
		name = "outbound-" + strconv.FormatInt(r.ID, 10)
	}
	e := &ext{name: name, conds: []cond{{field: "destination_number", expr: numberExpr(num)}}}
	if r.Emergency {
		e.conds[0].actions = acts
		return e
	}
	level := r.MinPermission
	if !validPermission(level) {
		level = "national"
	}
	// toll_allow is set by our directory from call_permission: our variable.
	e.conds = append(e.conds, cond{field: "${toll_allow}", expr: tollExpr(level), actions: acts,
		anti: []action{act("hangup", "CALL_REJECTED")}})
	return e
}

// callerID sets the caller id per the route's policy and returns the number
// it set ("" for passthrough: the caller's own, unknown here). Values are
// computed here as literals (validated digits) rather than referenced as
// variables.
func (p *planner) callerID(req xmlcurl.Request, r *OutboundRoute) ([]action, string) {
	t := &p.snap.Tenant
	var num string
	switch r.CallerIDPolicy {
	case "passthrough":
		return nil, ""
	case "fixed":
		num = firstValid(validCallerNumber, r.CallerIDFixed)
	case "tenant":
		num = firstValid(validCallerNumber, t.CallerID)
	default: // extension
		var own string
		p.trace.CallerDependent = true // before reading the caller (see emergencyCallerID)
		if validNumber(req.Ext) && (req.Tenant == "" || req.Tenant == p.tenant) {
			if x := p.snap.extension(req.Ext); x != nil {
				own = x.OutboundCallerID
			}
		}
		num = firstValid(validCallerNumber, own, t.CallerID)
	}
	var acts []action
	if num != "" {
		acts = append(acts, set("effective_caller_id_number", num))
	}
	if name := sanitizeName(t.OutboundCallerIDName); name != "" {
		acts = append(acts, set("effective_caller_id_name", name))
	}
	return acts, num
}

// transform applies strip_digits and prepend; the result must be dialable.
func transform(pt Pattern, num string) (string, bool) {
	if pt.StripDigits < 0 || pt.StripDigits >= len(num) {
		return "", false
	}
	if pt.Prepend != "" && !validDialable(pt.Prepend) {
		return "", false
	}
	out := pt.Prepend + num[pt.StripDigits:]
	return out, validDialable(out)
}

// usableTrunks lists the route's trunks, in failover order, that this tenant
// may use, that are enabled and whose names are safe for a dial string.
func (p *planner) usableTrunks(r *OutboundRoute) []string {
	var out []string
	for _, name := range r.Trunks {
		if t := p.snap.trunk(name); t != nil && t.Enabled && validTrunkName(name) {
			out = append(out, name)
		}
	}
	p.trace.Trunks = out
	return out
}

// validTrunkName matches ^[a-z0-9_]{1,40}$ (naming.ValidGatewayName).
func validTrunkName(s string) bool { return naming.ValidGatewayName(s) }

// bridges tries each trunk in turn. A trunk with max_channels runs its
// bridge under limit_execute (mod_hash, counted per node): a full trunk is
// skipped for the next one, and the channel is released when the bridge
// ends. cid, the caller id number set for the call ("" when the caller's
// own passes through), is presented on each leg in the trunk's
// callerid_format. Emergency calls are never limited.
func (p *planner) bridges(trunks []string, dialled, cid string, emergency bool) []action {
	acts := []action{set("continue_on_fail", "true"), set("hangup_after_bridge", "true")}
	for _, name := range trunks {
		t := p.snap.trunk(name)
		dial := "sofia/gateway/" + name + "/" + dialled
		// The leg already presents cid (effective_caller_id_number): only a
		// different form needs the per-leg override.
		if n := formatCallerNumber(cid, t.CallerIDFormat, p.snap.Tenant.Country); n != "" && n != cid {
			dial = "[origination_caller_id_number=" + n + "]" + dial
		}
		if t.MaxChannels > 0 && !emergency {
			acts = append(acts, act("limit_execute", "hash trunk "+name+" "+itoa(min(t.MaxChannels, 100000))+" bridge "+dial))
			continue
		}
		acts = append(acts, act("bridge", dial))
	}
	return acts
}

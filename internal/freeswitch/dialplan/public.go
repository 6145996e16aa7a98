package dialplan

import (
	"strings"
	"time"

	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

// Public renders the "public" context for a call to a DID: one extension
// matching the number (with or without '+') that tags the channel with its
// tenant and transfers it to the destination chosen at now. The destination
// is, in order: the inbound route's routing condition (match/nomatch), the
// office-mode destination (day/night/holiday), else the route's destination.
// A disabled condition falls back to the route's destination; a disabled
// tenant gets CALL_REJECTED. Unknown or disabled DIDs get NotFound.
func Public(opts Options, req xmlcurl.Request, pub *PublicSnapshot, now time.Time) ([]byte, Trace) {
	dest := req.DestinationNumber()
	tr := Trace{Context: "public", Number: dest, Caller: req.CallerNumber()}
	if pub == nil || pub.Tenant == nil || !pub.DID.Enabled || !validDialable(dest) || !validHost(opts.Domain) {
		tr.Reason = "unknown DID"
		return xmldoc.NotFound(), tr
	}
	if strings.TrimPrefix(pub.DID.Number, "+") != strings.TrimPrefix(dest, "+") {
		tr.Reason = "DID does not match the dialled number"
		return xmldoc.NotFound(), tr
	}
	snap := pub.Tenant
	t := &snap.Tenant
	if !validTenant(t.Tenant) || !strings.EqualFold(t.Tenant, pub.DID.Tenant) {
		tr.Reason = "DID has no valid tenant"
		return xmldoc.NotFound(), tr
	}
	p := &planner{opts: opts, snap: snap, tenant: t.Tenant, now: now, trace: &tr}
	tr.Match = "did"
	number := strings.TrimPrefix(pub.DID.Number, "+")
	e := ext{name: "did-" + number}
	c := cond{field: "destination_number", expr: `^\+?` + regexQuote(number) + "$"}
	if !t.Enabled {
		tr.Reason = "tenant disabled"
		c.actions = []action{act("hangup", "CALL_REJECTED")}
		e.conds = []cond{c}
		return writeDialplan("public", []ext{e}), tr
	}
	c.actions = []action{
		set("domain_name", opts.Domain),
		set("sb_tenant", t.Tenant),
		set("user_context", t.Tenant),
		set("sb_did", "+"+number),
	}
	if lang := firstValid(validLanguage, t.Language); lang != "" {
		c.actions = append(c.actions, set("default_language", lang))
	}
	if tz := firstValid(validZone, t.Timezone); tz != "" {
		c.actions = append(c.actions, set("timezone", tz))
	}
	if moh := snap.tenantMOH(); moh != "" {
		// The tenant's hold music for the caller's channel: a hunt group's
		// music ringback (${hold_music}) and holds on this leg play it.
		c.actions = append(c.actions, set("hold_music", moh))
	}
	route := p.inboundRoute(pub.DID, tr.Caller)
	if route == nil {
		tr.Reason = "no inbound route"
		return xmldoc.NotFound(), tr
	}
	tr.RouteID, tr.RouteName = route.ID, route.Name
	if route.Name != "" {
		e.name = route.Name
	}
	c.actions = append(c.actions, set("sb_inbound_route", i64toa(route.ID)))
	if lang := firstValid(validLanguage, route.Language); lang != "" {
		c.actions = append(c.actions, set("default_language", lang))
	}
	contact := ""
	if t.CRMCallerNameLookup {
		// The name depends on who calls, found or not.
		tr.CallerDependent = true
		// A contact's name is tenant users' data: sanitised as strictly as
		// the caller's own, so it can never form ${ once rendered.
		contact = sanitizeCallerName(pub.CallerContactName)
		tr.CallerContact = contact
	}
	if prefix := sanitizeName(firstNonEmpty(route.CallerIDNamePrefix, pub.DID.CallerIDName)); prefix != "" || contact != "" {
		// The prefix and the caller's (or contact's) name are joined here,
		// as literal text, rather than with ${caller_id_name}: the caller's
		// name comes from the SIP From header and must not be expanded.
		tr.CallerDependent = true
		name := contact
		if name == "" {
			name = sanitizeCallerName(req.CallerName())
		}
		c.actions = append(c.actions, set("effective_caller_id_name", neutraliseExpansion(strings.TrimSpace(prefix+" "+name))))
	}
	d := p.inboundDestination(route, tr.Caller)
	acts, ok := p.destination(d)
	if !ok {
		tr.Reason = "destination invalid"
		return xmldoc.NotFound(), tr
	}
	if d.Type == "external" {
		// An administrator sent this DID to an outside number: the caller
		// (outside, so without a toll_allow of its own) may use the routes.
		c.actions = append(c.actions, set("toll_allow", tollAllow("international")))
	}
	tr.Destination = &d
	c.actions = append(c.actions, acts...)
	e.conds = []cond{c}
	return writeDialplan("public", []ext{e}), tr
}

// inboundRoute picks the enabled route for the DID whose caller_match fits
// the caller best (longest prefix; "anonymous" for a hidden caller; no
// caller_match is the weakest), else the DID's default route.
func (p *planner) inboundRoute(did DID, caller string) *InboundRoute {
	want := strings.TrimPrefix(did.Number, "+")
	var best *InboundRoute
	bestLen := -1
	for i := range p.snap.InboundRoutes {
		r := &p.snap.InboundRoutes[i]
		if !r.Enabled || strings.TrimPrefix(r.DID, "+") != want {
			continue
		}
		score := 0
		if r.CallerMatch != "" {
			p.trace.CallerDependent = true
			if !callerMatches(r.CallerMatch, caller) {
				continue
			}
			score = len(r.CallerMatch)
		}
		if score > bestLen {
			best, bestLen = r, score
		}
	}
	if best == nil && did.InboundRouteID != 0 {
		for i := range p.snap.InboundRoutes {
			if r := &p.snap.InboundRoutes[i]; r.ID == did.InboundRouteID && r.Enabled {
				return r
			}
		}
	}
	return best
}

func callerMatches(match, caller string) bool {
	if match == "anonymous" {
		return caller == "" || strings.EqualFold(caller, "anonymous")
	}
	if !validDialable(match) || caller == "" {
		return false
	}
	return strings.HasPrefix(caller, match) ||
		strings.HasPrefix(strings.TrimPrefix(caller, "+"), strings.TrimPrefix(match, "+"))
}

// inboundDestination applies the routing condition, then office mode.
func (p *planner) inboundDestination(r *InboundRoute, caller string) Destination {
	if r.RoutingConditionID != 0 {
		c := p.snap.condition(r.RoutingConditionID)
		if c != nil && c.Enabled {
			return p.conditionDestination(c, caller)
		}
		p.trace.ConditionID = r.RoutingConditionID
		p.trace.ConditionBranch = "fallback"
		p.trace.ConditionReason = "condition disabled or missing"
		return r.Destination
	}
	if r.DayDestination == nil && r.NightDestination == nil && r.HolidayDestination == nil {
		return r.Destination
	}
	mode := p.officeMode()
	p.trace.OfficeMode = mode
	var d *Destination
	switch mode {
	case "day":
		d = r.DayDestination
	case "night":
		d = r.NightDestination
	case "holiday":
		d = r.HolidayDestination
	}
	if d == nil || d.Type == "" {
		return r.Destination
	}
	return *d
}

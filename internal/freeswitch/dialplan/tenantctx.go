package dialplan

import (
	"slices"
	"strings"
	"time"

	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

// failPrefix marks the internal destination an extension's bridge transfers
// to when it fails and busy / no-answer / unregistered lead to different
// places. It contains a '-', so no number-plan object can collide with it.
const failPrefix = "fail-"

// TenantContext renders the tenant's own context (named after the tenant)
// for the dialled number: only the one extension that handles it, decided
// here in Go. In order: a local extension, a special mailbox, a routing
// condition number, a hunt group, a conference room, an IVR menu, a queue, a feature code (call parking too: park.go), an emergency number, then the outbound
// routes by priority. Unknown tenant or no match: NotFound.
func TenantContext(opts Options, req xmlcurl.Request, snap *TenantSnapshot, now time.Time) ([]byte, Trace) {
	num := req.DestinationNumber()
	tr := Trace{Context: req.Context(), Number: num, Caller: req.CallerNumber()}
	if snap == nil || !validTenant(snap.Tenant.Tenant) || !strings.EqualFold(req.Context(), snap.Tenant.Tenant) || !validHost(opts.Domain) {
		tr.Reason = "unknown context"
		return xmldoc.NotFound(), tr
	}
	if !snap.Tenant.Enabled {
		tr.Reason = "tenant disabled"
		return xmldoc.NotFound(), tr
	}
	p := &planner{opts: opts, snap: snap, tenant: snap.Tenant.Tenant, now: now, trace: &tr, callerName: req.CallerName(),
		forwardChain: req.ForwardChain(), req: req}
	var e *ext
	switch {
	case strings.HasPrefix(num, failPrefix):
		e = p.failover(strings.TrimPrefix(num, failPrefix))
	case strings.HasPrefix(num, queueAfterPrefix):
		e = p.queueAfter(strings.TrimPrefix(num, queueAfterPrefix))
	case strings.HasPrefix(num, promptPrefix):
		e = p.promptThenHangup(strings.TrimPrefix(num, promptPrefix))
	case strings.HasPrefix(num, confPINPrefix):
		e = p.conferencePINCheck(strings.TrimPrefix(num, confPINPrefix))
	case strings.HasPrefix(num, parkReturnPrefix):
		e = p.parkReturn(strings.TrimPrefix(num, parkReturnPrefix))
	case strings.HasPrefix(num, naming.ParkPresencePrefix):
		e = p.parkPresenceDial(num)
	case !validDialable(num):
		tr.Reason = "number not dialable"
	default:
		e = p.local(num)
		if e == nil {
			e = p.feature(num)
		}
		if e == nil {
			e = p.emergency(req, num)
		}
		if e == nil {
			e = p.outbound(req, num)
		}
	}
	if e == nil {
		if tr.Reason == "" {
			tr.Reason = "no match"
		}
		tr.Match = ""
		return xmldoc.NotFound(), tr
	}
	return writeDialplan(p.tenant, []ext{*e}), tr
}

// promptPrefix marks the internal number that plays a voice prompt and
// hangs up (an IVR option's prompt_then_hangup, which a menu entry cannot
// run as one application). It contains a '-': no number-plan object
// collides with it.
const promptPrefix = "prompt-"

// promptThenHangup renders "prompt-<id>" for a prompt of the tenant.
func (p *planner) promptThenHangup(id string) *ext {
	if !allIn(id, "0123456789") || len(id) == 0 || len(id) > 18 || p.promptPath(id) == "" {
		return nil
	}
	p.trace.Match = "prompt_then_hangup"
	acts, _ := p.destination(Destination{Type: "prompt_then_hangup", Target: id})
	return single(promptPrefix+id, promptPrefix+id, acts)
}

// single is an extension with one condition on destination_number.
func single(name, number string, acts []action) *ext {
	return &ext{name: name, conds: []cond{{field: "destination_number", expr: numberExpr(number), actions: acts}}}
}

// local handles the tenant's own numbers: extensions, special mailboxes,
// routing conditions, hunt groups, conference rooms, IVR menus, queues and
// special endpoints and the company directory's dial-by-name number.
func (p *planner) local(num string) *ext {
	if !validNumber(num) {
		return nil
	}
	if x := p.snap.extension(num); x != nil {
		if !x.Enabled {
			p.trace.Reason = "extension disabled"
			return nil
		}
		p.trace.Match = "extension"
		return single("ext-"+num, num, p.extensionActions(x))
	}
	if m := p.snap.mailbox(num); m != nil && m.Enabled {
		p.trace.Match = "special_mailbox"
		return p.mailboxExt(m)
	}
	for i := range p.snap.RoutingConditions {
		c := &p.snap.RoutingConditions[i]
		if c.Number != num || !c.Enabled {
			continue
		}
		p.trace.Match = "routing_condition"
		d := p.conditionDestination(c, p.trace.Caller)
		acts, ok := p.destination(d)
		if !ok {
			p.trace.Reason = "destination invalid"
			return nil
		}
		p.trace.Destination = &d
		name := c.Name
		if name == "" {
			name = "condition-" + num
		}
		return single(name, num, acts)
	}
	if g := p.snap.huntGroup(num); g != nil && g.Enabled {
		p.trace.Match = "hunt_group"
		acts := p.huntActions(g)
		if acts == nil {
			return nil
		}
		return single(firstNonEmpty(g.Name, "hunt-"+num), num, acts)
	}
	if c := p.snap.conferenceRoom(num); c != nil && c.Enabled {
		p.trace.Match = "conference"
		return single(firstNonEmpty(c.Name, "conference-"+num), num, p.conferenceActions(c))
	}
	if m := p.snap.ivrMenu(num); m != nil && m.Enabled {
		p.trace.Match = "ivr"
		return single(firstNonEmpty(m.Name, "ivr-"+num), num, p.ivrActions(m))
	}
	if q := p.snap.queue(num); q != nil && q.Enabled {
		p.trace.Match = "queue"
		return single(firstNonEmpty(q.Name, "queue-"+num), num, p.queueActions(q))
	}
	if se := p.snap.specialEndpoint(num); se != nil && se.Enabled {
		p.trace.Match = "special_endpoint"
		acts := p.specialEndpointActions(se)
		if acts == nil {
			return nil
		}
		return single(firstNonEmpty(se.Name, "endpoint-"+num), num, acts)
	}
	if cd := p.snap.CompanyDirectory; cd != nil && cd.Number == num {
		p.trace.Match = "directory"
		return single("company-directory", num, p.companyDirectoryActions(cd))
	}
	return nil
}

// extensionActions rings an extension: DND and forward-all first, else
// bridge to the user with failover for busy, no answer and unregistered.
func (p *planner) extensionActions(x *Extension) []action {
	if x.DND {
		p.trace.Reason = "dnd"
		return p.busyActions(x)
	}
	if forwardOK(x, x.ForwardAll) {
		p.trace.Reason = "forward_all"
		return p.forward(x, x.ForwardAll.Destination)
	}
	acts := []action{
		set("call_timeout", itoa(ringSeconds(x))),
		set("continue_on_fail", "true"),
		set("hangup_after_bridge", "true"),
		set("sb_called_ext", x.Name),
	}
	legs := []string{"user/" + naming.UserID(p.tenant, x.Name) + "@" + p.opts.Domain}
	if pickup := p.pickupLegs(x.Name); len(pickup) > 0 {
		// A pickup leg rings until the call is picked up or cancelled, so
		// without this a busy or unregistered phone would leave the call
		// ringing until call_timeout and the busy / unregistered failover
		// would never be taken: the phone's own rejection ends the bridge.
		acts = append(acts, set("fail_on_single_reject", "USER_BUSY,CALL_REJECTED,USER_NOT_REGISTERED,SUBSCRIBER_ABSENT"))
		legs = append(legs, pickup...)
	}
	acts = append(acts, act("bridge", strings.Join(legs, ",")))
	busy, noAnswer, unreg := p.busyActions(x), p.noAnswerActions(x), p.unregisteredActions(x)
	if slices.Equal(busy, noAnswer) && slices.Equal(busy, unreg) {
		return append(acts, busy...)
	}
	return append(acts, p.transfer(failPrefix+x.Name))
}

// failover renders "fail-<ext>": after a failed bridge, branch on
// originate_disposition (a variable FreeSWITCH sets; no user value in ${}).
func (p *planner) failover(num string) *ext {
	x := p.snap.extension(num)
	if !validNumber(num) || x == nil || !x.Enabled {
		return nil
	}
	p.trace.Match = "extension_failover"
	const disp = "${originate_disposition}"
	return &ext{name: failPrefix + num, conds: []cond{
		{field: "destination_number", expr: numberExpr(failPrefix + num)},
		{field: disp, expr: "^(USER_BUSY|CALL_REJECTED)$", brk: "on-true", actions: p.busyActions(x)},
		{field: disp, expr: "^(USER_NOT_REGISTERED|SUBSCRIBER_ABSENT)$", brk: "on-true", actions: p.unregisteredActions(x)},
		{field: "destination_number", expr: numberExpr(failPrefix + num), actions: p.noAnswerActions(x)},
	}}
}

// forward transfers to an extension's forward target under the extension
// owner's call permission (the forward is the owner's choice, not the
// caller's), so a forward cannot reach numbers the owner could not dial.
//
// Loop guard: sb_forward_chain (our variable, set here) lists the
// extensions that already forwarded this call. A forward back to one of
// them, or a chain of maxForwardHops, goes to the extension's voicemail
// (else hangs up) instead of transferring again, so two extensions
// forwarding to each other cannot bounce a call for ever.
func (p *planner) forward(x *Extension, target string) []action {
	p.trace.CallerDependent = true // the render reads the call's chain
	chain := p.forwardChain
	if !validForwardChain(chain) {
		chain = ""
	}
	hops := strings.Split(chain, "-")
	if chain == "" {
		hops = nil
	}
	if slices.Contains(hops, x.Name) || slices.Contains(hops, target) || len(hops) >= maxForwardHops {
		p.trace.Reason = "forward loop"
		if x.VoicemailEnabled {
			return p.voicemail(x.Name)
		}
		return []action{act("hangup", "NORMAL_CLEARING")}
	}
	return []action{
		set("toll_allow", tollAllow(x.CallPermission)),
		set("sb_forwarded_by", x.Name),
		set("sb_forward_chain", strings.Join(append(hops, x.Name), "-")),
		p.transfer(target),
	}
}

// maxForwardHops bounds a chain of forwards.
const maxForwardHops = 5

// validForwardChain matches extension numbers joined by '-', the only form
// forward writes.
func validForwardChain(s string) bool {
	return len(s) <= 64 && allIn(s, "0123456789-")
}

// Failover choices: an enabled forward wins, then voicemail, then hangup.
func (p *planner) busyActions(x *Extension) []action {
	return p.fallback(x, x.ForwardBusy, "USER_BUSY")
}

func (p *planner) noAnswerActions(x *Extension) []action {
	return p.fallback(x, x.ForwardNoAnswer, "NO_ANSWER")
}

func (p *planner) unregisteredActions(x *Extension) []action {
	if forwardOK(x, x.ForwardUnregistered) {
		return p.forward(x, x.ForwardUnregistered.Destination)
	}
	return p.noAnswerActions(x)
}

func (p *planner) fallback(x *Extension, f Forward, cause string) []action {
	if forwardOK(x, f) {
		return p.forward(x, f.Destination)
	}
	if x.VoicemailEnabled {
		return p.voicemail(x.Name)
	}
	return []action{act("hangup", cause)}
}

// forwardOK reports whether a forward is usable: enabled, dialable, and not
// back to the extension itself (which would transfer in a loop).
func forwardOK(x *Extension, f Forward) bool {
	return f.Enabled && validDialable(f.Destination) && f.Destination != x.Name
}

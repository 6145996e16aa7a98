package dialplan

import (
	"strconv"

	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/freeswitch/schedule"
	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
	"strings"
	"time"
)

// RenderedDestinationTypes are the destination types this renderer turns
// into a dialplan that reaches its target. Any other type is refused at
// input until its rendering lands: add a type here in the change that
// renders it, and the API accepts it
// (models.Registry.SetRenderedDestinations).
var RenderedDestinationTypes = []string{"extension", "voicemail", "external", "routing_condition", "prompt_then_hangup", "hangup", "hunt_group", "conference", "ivr", "queue", "special_mailbox", "directory", "special_endpoint"}

// planner carries what one dialplan render needs.
type planner struct {
	opts   Options
	snap   *TenantSnapshot
	tenant string
	now    time.Time
	trace  *Trace
	// callerName is the caller's display name (SIP From: caller data).
	callerName string
	// forwardChain is the call's sb_forward_chain (forward's loop guard).
	forwardChain string
	// req is the fetch (the caller's sb_tenant and sb_ext for pickups).
	req xmlcurl.Request
}

func (p *planner) transfer(number string) action {
	return act("transfer", number+" XML "+p.tenant)
}

func (p *planner) voicemail(box string) []action {
	return []action{act("answer", ""), act("voicemail", naming.VoicemailProfile+" "+p.opts.Domain+" "+naming.VoicemailBox(p.tenant, box))}
}

// destination turns a destination object into actions (resources.md §0). It
// returns false when the target fails validation, so nothing is rendered.
func (p *planner) destination(d Destination) ([]action, bool) {
	switch d.Type {
	case "extension", "queue", "hunt_group", "ivr", "conference", "routing_condition", "special_endpoint", "directory", "special_mailbox":
		// A special mailbox is reached through its number, which applies
		// its message limits (mailboxExt).
		if !validNumber(d.Target) {
			return nil, false
		}
		return []action{p.transfer(d.Target)}, true
	case "voicemail":
		if !validNumber(d.Target) {
			return nil, false
		}
		return p.voicemail(d.Target), true
	case "external":
		if !validDialable(d.Target) {
			return nil, false
		}
		return []action{p.transfer(d.Target)}, true
	case "prompt_then_hangup":
		acts := []action{act("answer", "")}
		if file := p.promptPath(d.Target); file != "" {
			acts = append(acts, act("playback", file))
		}
		return append(acts, act("hangup", "NORMAL_CLEARING")), true
	case "hangup":
		cause := d.Target
		if !validCause(cause) {
			cause = "NORMAL_CLEARING"
		}
		return []action{act("hangup", cause)}, true
	}
	return nil, false
}

// promptPath is where a node plays a voice prompt (by id) from
// (promptFile), or "" when the prompt or a path part is unknown or unsafe.
func (p *planner) promptPath(target string) string {
	id, err := strconv.ParseInt(target, 10, 64)
	if err != nil {
		return ""
	}
	vp := p.snap.prompt(id)
	if vp == nil {
		return ""
	}
	return p.promptFile(vp.Filename)
}

// zone is the tenant's time zone for schedules without their own.
func (p *planner) zone() string { return firstNonEmpty(p.snap.Tenant.Timezone, p.opts.DefaultTimezone) }

// officeMode is the tenant's effective office mode at p.now: a forced mode
// until it expires, else (auto) the schedule's state: open -> day,
// holiday -> holiday, closed -> night. "" when it cannot be known.
func (p *planner) officeMode() string {
	om := p.snap.OfficeMode
	if om == nil {
		return ""
	}
	p.trace.TimeDependent = true
	switch om.Mode {
	case "day", "night", "holiday", "break":
		if om.Until == "" {
			return om.Mode
		}
		if until, err := time.Parse(time.RFC3339, om.Until); err == nil && p.now.Before(until) {
			return om.Mode
		}
	}
	s := p.snap.schedule(om.ScheduleID)
	if s == nil {
		return ""
	}
	open, holiday, err := s.State(p.now, p.zone())
	p.noteSchedule(s, open, holiday, err)
	switch {
	case err != nil:
		return ""
	case holiday != nil:
		return "holiday"
	case open:
		return "day"
	}
	return "night"
}

func (p *planner) noteSchedule(s *Schedule, open bool, holiday *schedule.Holiday, err error) {
	p.trace.ScheduleID = s.ID
	if err != nil {
		p.trace.Reason = "schedule: " + err.Error()
		return
	}
	p.trace.ScheduleOpen = &open
	if holiday != nil {
		p.trace.Holiday = holiday.Name
	}
}

// evalCondition decides a routing condition at p.now for caller.
func (p *planner) evalCondition(c *RoutingCondition, caller string) bool {
	p.trace.ConditionID, p.trace.ConditionName = c.ID, c.Name
	match, reason := p.decideCondition(c, caller)
	p.trace.ConditionReason = reason
	p.trace.ConditionBranch = "nomatch"
	if match {
		p.trace.ConditionBranch = "match"
	}
	return match
}

func (p *planner) decideCondition(c *RoutingCondition, caller string) (bool, string) {
	if c.Override == "force_match" || c.Override == "force_nomatch" {
		active := c.OverrideUntil == ""
		if !active {
			p.trace.TimeDependent = true
			until, err := time.Parse(time.RFC3339, c.OverrideUntil)
			active = err == nil && p.now.Before(until)
		}
		if active {
			return c.Override == "force_match", "override " + c.Override
		}
	}
	switch c.Kind {
	case "schedule":
		s := p.snap.schedule(c.ScheduleID)
		if s == nil {
			return false, "schedule missing"
		}
		p.trace.TimeDependent = true
		open, holiday, err := s.State(p.now, p.zone())
		p.noteSchedule(s, open, holiday, err)
		if err != nil {
			return false, "schedule invalid"
		}
		if holiday != nil {
			return false, "holiday"
		}
		if open {
			return true, "schedule open"
		}
		return false, "schedule closed"
	case "office_mode":
		mode := p.officeMode()
		p.trace.OfficeMode = mode
		return mode != "" && hasString(c.OfficeModes, mode), "office mode " + mode
	case "caller":
		p.trace.CallerDependent = true
		for _, prefix := range c.CallerPrefixes {
			if validDialable(prefix) && strings.HasPrefix(caller, prefix) {
				return true, "caller prefix " + prefix
			}
		}
		return false, "no caller prefix"
	case "manual":
		return false, "manual, no override"
	}
	return false, "unknown kind"
}

// conditionDestination is the destination a condition yields now.
func (p *planner) conditionDestination(c *RoutingCondition, caller string) Destination {
	if p.evalCondition(c, caller) {
		return c.MatchDestination
	}
	return c.NomatchDestination
}

package dialplan

import (
	"strings"

	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
)

// Queues and agents (resources.md §2.2, §2.3) are mod_callcenter's. The
// tenant context answers a queue's number by running "callcenter
// <number>@<tenant>", then sends a caller who left the queue to the exit
// destination (they pressed the exit key) or the timeout destination;
// callcenter.conf serves the queue's parameters when mod_callcenter loads
// it (CC-Queue), and at module load every tenant's queues, agents and
// tiers, because mod_callcenter reads agents and tiers only then (later
// changes reach it as callcenter_config commands, package callcenter).
// Queue and agent names are "<number>@<tenant>": tenant names never hold
// '@', and numbers are digits, so a name splits at its one '@'.

// queueAfterPrefix marks the internal destination a queue's caller is
// transferred to when the callcenter application returns: a second
// dialplan lookup, so that the cancel reason mod_callcenter set
// (cc_cancel_reason) can choose between the exit and the timeout
// destinations. It contains a '-', so no number-plan object collides.
const queueAfterPrefix = "queue-after-"

// AgentStatus is mod_callcenter's name of an agent status the API stores
// ("Logged Out" for anything unknown).
func AgentStatus(status string) string {
	switch status {
	case "available":
		return "Available"
	case "available_on_demand":
		return "Available (On Demand)"
	case "on_break":
		return "On Break"
	}
	return "Logged Out"
}

// AgentContact is the dial string mod_callcenter originates to reach an
// agent: the extension's SIP user, or for a remote agent its number through
// the tenant context's outbound routes (a loopback leg allowed every call
// class, as a forward or an external hunt-group member is; only the
// originate's {} variables reach that leg, hence ^^: so the list's commas
// stay inside the one variable). "" when the agent cannot be reached.
func AgentContact(domain, tenant string, a *Agent) string {
	switch {
	case a.ContactType == "external":
		if !validDialable(a.ExternalNumber) {
			return ""
		}
		return "{^^:toll_allow=" + tollAllow("international") + "}loopback/" + a.ExternalNumber + "/" + tenant
	case validNumber(a.Extension) && validHost(domain):
		return "user/" + naming.UserID(tenant, a.Extension) + "@" + domain
	}
	return ""
}

func (s *TenantSnapshot) queue(number string) *Queue {
	for i := range s.Queues {
		if s.Queues[i].Number == number {
			return &s.Queues[i]
		}
	}
	return nil
}

func (s *TenantSnapshot) queueByID(id int64) *Queue {
	for i := range s.Queues {
		if s.Queues[i].ID == id {
			return &s.Queues[i]
		}
	}
	return nil
}

// queueActions answers, greets, enqueues the caller, then looks the
// outcome up under queue-after-<number>.
func (p *planner) queueActions(q *Queue) []action {
	acts := []action{act("answer", "")}
	if prefix := sanitizeName(q.CallerIDNamePrefix); prefix != "" {
		// As a hunt group does: literal text, never ${caller_id_name}.
		p.trace.CallerDependent = true
		name := sanitizeCallerName(p.callerName)
		acts = append(acts, set("effective_caller_id_name", neutraliseExpansion(strings.TrimSpace(prefix+" "+name))))
	}
	if q.ExitKey != "" && len(q.ExitKey) == 1 && allIn(q.ExitKey, "0123456789*#") {
		// mod_callcenter ends the wait when the caller presses one of
		// cc_exit_keys and sets cc_cancel_reason=EXIT_WITH_KEY.
		acts = append(acts, set("cc_exit_keys", q.ExitKey))
	}
	if file := p.promptPath(i64toa(q.GreetingPromptID)); q.GreetingPromptID != 0 && file != "" {
		acts = append(acts, act("playback", file))
	}
	acts = append(acts, act("callcenter", naming.QueueName(p.tenant, q.Number)))
	return append(acts, p.transfer(queueAfterPrefix+q.Number))
}

// queueAfter renders "queue-after-<number>": the exit destination when
// the caller pressed the exit key, else the timeout destination (hangup
// when unset). cc_cancel_reason is set by mod_callcenter, never by a caller.
func (p *planner) queueAfter(num string) *ext {
	q := p.snap.queue(num)
	if !validNumber(num) || q == nil || !q.Enabled {
		return nil
	}
	p.trace.Match = "queue_after"
	d := Destination{Type: "hangup"}
	if q.TimeoutDestination != nil && q.TimeoutDestination.Type != "" {
		d = *q.TimeoutDestination
	}
	timeout, ok := p.destination(d)
	if !ok {
		timeout = []action{act("hangup", "NORMAL_CLEARING")}
	} else {
		p.trace.Destination = &d
	}
	e := &ext{name: queueAfterPrefix + num, conds: []cond{{field: "destination_number", expr: numberExpr(queueAfterPrefix + num)}}}
	if q.ExitDestination != nil && q.ExitDestination.Type != "" && q.ExitKey != "" {
		if exit, ok := p.destination(*q.ExitDestination); ok {
			e.conds = append(e.conds, cond{field: "${cc_cancel_reason}", expr: "^EXIT_WITH_KEY$", brk: "on-true", actions: exit})
		}
	}
	e.conds = append(e.conds, cond{field: "destination_number", expr: numberExpr(queueAfterPrefix + num), actions: timeout})
	return e
}

// CallcenterConf renders callcenter.conf. A fetch naming a queue
// (CC-Queue=<number>@<tenant>) gets that queue only, from the one snapshot
// of its tenant; NotFound when the queue is unknown or disabled. A fetch
// naming none (module load) gets every given tenant's enabled queues, and
// their enabled agents with the tiers that join them to those queues.
func CallcenterConf(opts Options, req xmlcurl.Request, snaps []*TenantSnapshot) []byte {
	name := req.CallcenterQueue()
	w := xmldoc.NewWriter(2048)
	if name != "" {
		num, tenant, ok := naming.SplitCallcenterName(name)
		if !ok || len(snaps) != 1 || snaps[0] == nil || !snaps[0].Tenant.Enabled || !strings.EqualFold(snaps[0].Tenant.Tenant, tenant) {
			return xmldoc.NotFound()
		}
		snap := snaps[0]
		q := snap.queue(num)
		if q == nil || !q.Enabled {
			return xmldoc.NotFound()
		}
		w.Raw(xmldoc.DocOpen)
		w.Raw("<section name=\"configuration\">\n<configuration name=\"callcenter.conf\" description=\"CallCenter\">\n<queues>\n")
		writeQueue(w, opts, snap, q)
		w.Raw("</queues>\n</configuration>\n")
		xmldoc.CloseSection(w)
		return w.Bytes()
	}
	w.Raw(xmldoc.DocOpen)
	w.Raw("<section name=\"configuration\">\n<configuration name=\"callcenter.conf\" description=\"CallCenter\">\n<queues>\n")
	for _, snap := range usableTenants(snaps) {
		for i := range snap.Queues {
			if q := &snap.Queues[i]; q.Enabled && validNumber(q.Number) {
				writeQueue(w, opts, snap, q)
			}
		}
	}
	w.Raw("</queues>\n<agents>\n")
	for _, snap := range usableTenants(snaps) {
		for i := range snap.Agents {
			writeAgent(w, opts, snap, &snap.Agents[i])
		}
	}
	w.Raw("</agents>\n<tiers>\n")
	for _, snap := range usableTenants(snaps) {
		for i := range snap.Agents {
			for _, t := range AgentTiers(snap, &snap.Agents[i]) {
				w.Raw("<tier")
				w.Attr("agent", t.Agent)
				w.Attr("queue", t.Queue)
				w.Attr("level", itoa(t.Level))
				w.Attr("position", itoa(t.Position))
				w.Raw("/>\n")
			}
		}
	}
	w.Raw("</tiers>\n</configuration>\n")
	xmldoc.CloseSection(w)
	return w.Bytes()
}

func usableTenants(snaps []*TenantSnapshot) []*TenantSnapshot {
	out := make([]*TenantSnapshot, 0, len(snaps))
	for _, s := range snaps {
		if s != nil && s.Tenant.Enabled && validTenant(s.Tenant.Tenant) {
			out = append(out, s)
		}
	}
	return out
}

// QueueParams are a queue's callcenter.conf parameters, in order.
func QueueParams(opts Options, snap *TenantSnapshot, q *Queue) [][2]string {
	p := &planner{opts: opts, snap: snap, tenant: snap.Tenant.Tenant, trace: &Trace{}}
	strategy := q.Strategy
	if !validToken(strategy, "") {
		strategy = "longest-idle-agent"
	}
	// The queue's class, else the tenant's, streamed by mod_local_stream as
	// <tenant>_<name> (local_stream.conf, rendered with the media), else
	// the platform's default stream.
	moh := firstNonEmpty(firstNonEmpty(snap.classMOH(q.MOHClassID), snap.tenantMOH()), DefaultMOH)
	timeBase := "queue"
	if q.TimeBaseScore == "system" {
		timeBase = "system"
	}
	out := [][2]string{
		{"strategy", strategy},
		{"moh-sound", moh},
		{"time-base-score", timeBase},
		{"max-wait-time", itoa(clampRange(q.MaxWaitSeconds, 0, 86400))},
		{"max-wait-time-with-no-agent", itoa(clampRange(q.MaxWaitNoAgentSeconds, 0, 86400))},
		{"max-wait-time-with-no-agent-time-reached", itoa(clampRange(q.MaxWaitNoAgentReachedSeconds, 0, 86400))},
		{"tier-rules-apply", boolText(q.TierRulesApply)},
		{"tier-rule-wait-second", itoa(clampRange(q.TierRuleWaitSeconds, 0, 86400))},
		{"tier-rule-wait-multiply-level", boolText(q.TierRuleWaitMultiplyLevel)},
		{"tier-rule-no-agent-no-wait", boolText(q.TierRuleNoAgentNoWait)},
		{"discard-abandoned-after", itoa(clampRange(q.DiscardAbandonedAfterSeconds, 0, 86400))},
		{"abandoned-resume-allowed", boolText(q.AbandonedResumeAllowed)},
	}
	if q.Record {
		// ${recordings_dir} (a global) and ${uuid} (the member channel's)
		// are expanded by mod_callcenter when it records: neither is user
		// data, and the tenant part passed validTenant.
		out = append(out, [2]string{"record-template", "${recordings_dir}/" + p.tenant + "/queue-" + q.Number + "-${uuid}.wav"})
	}
	if file := p.promptPath(i64toa(q.AnnouncePromptID)); q.AnnouncePromptID != 0 && file != "" && q.AnnounceFrequencySeconds > 0 {
		out = append(out, [2]string{"announce-sound", file}, [2]string{"announce-frequency", itoa(clampRange(q.AnnounceFrequencySeconds, 1, 3600))})
	}
	return out
}

func writeQueue(w *xmldoc.Writer, opts Options, snap *TenantSnapshot, q *Queue) {
	w.Raw("<queue")
	w.Attr("name", naming.QueueName(snap.Tenant.Tenant, q.Number))
	w.Raw(">\n")
	for _, kv := range QueueParams(opts, snap, q) {
		w.Param("param", kv[0], kv[1])
	}
	w.Raw("</queue>\n")
}

// AgentSettings are the agent's mod_callcenter settings as callcenter_config
// "agent set" keys and values (contact first), or nil when the agent is
// disabled or cannot be reached.
func AgentSettings(domain, tenant string, a *Agent) [][2]string {
	contact := AgentContact(domain, tenant, a)
	if !agentUsable(a) || contact == "" {
		return nil
	}
	return [][2]string{
		{"contact", contact},
		{"max_no_answer", itoa(clampRange(a.MaxNoAnswer, 0, 1000))},
		{"wrap_up_time", itoa(clampRange(a.WrapUpSeconds, 0, 3600))},
		{"reject_delay_time", itoa(clampRange(a.RejectDelaySeconds, 0, 3600))},
		{"busy_delay_time", itoa(clampRange(a.BusyDelaySeconds, 0, 3600))},
		{"no_answer_delay_time", itoa(clampRange(a.NoAnswerDelaySeconds, 0, 3600))},
		{"status", AgentStatus(a.Status)},
	}
}

// agentUsable: enabled, with a valid agent number and something to ring.
func agentUsable(a *Agent) bool {
	if !a.Enabled || !validNumber(a.AgentNumber) {
		return false
	}
	if a.ContactType == "external" {
		return validDialable(a.ExternalNumber)
	}
	return validNumber(a.Extension)
}

func writeAgent(w *xmldoc.Writer, opts Options, snap *TenantSnapshot, a *Agent) {
	set := AgentSettings(opts.Domain, snap.Tenant.Tenant, a)
	if set == nil {
		return
	}
	attr := map[string]string{"contact": "contact", "max_no_answer": "max-no-answer", "wrap_up_time": "wrap-up-time",
		"reject_delay_time": "reject-delay-time", "busy_delay_time": "busy-delay-time", "no_answer_delay_time": "no-answer-delay-time", "status": "status"}
	w.Raw("<agent")
	w.Attr("name", naming.AgentName(snap.Tenant.Tenant, a.AgentNumber))
	w.Attr("type", "callback")
	for _, kv := range set {
		w.Attr(attr[kv[0]], kv[1])
	}
	w.Raw("/>\n")
}

// Tier joins an agent to a queue, by their mod_callcenter names.
type Tier struct {
	Agent, Queue    string
	Level, Position int
}

// AgentTiers are the tiers of an enabled, reachable agent to the enabled
// queues of its tenant it lists.
func AgentTiers(snap *TenantSnapshot, a *Agent) []Tier {
	if !agentUsable(a) {
		return nil
	}
	var out []Tier
	for _, t := range a.Queues {
		q := snap.queueByID(t.QueueID)
		if q == nil || !q.Enabled || !validNumber(q.Number) {
			continue
		}
		out = append(out, Tier{Agent: naming.AgentName(snap.Tenant.Tenant, a.AgentNumber), Queue: naming.QueueName(snap.Tenant.Tenant, q.Number),
			Level: clampInt(t.Level, 1, 9, 1), Position: clampInt(t.Position, 1, 99, 1)})
	}
	return out
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// clampRange is v within [lo, hi] (zero stays zero when lo is 0).
func clampRange(v, lo, hi int) int { return min(max(v, lo), hi) }

// mohClass is the tenant's music-on-hold class id, when its name is one
// local_stream.conf can carry (^[a-z0-9_]{1,32}$).
func (s *TenantSnapshot) mohClass(id int64) *MusicOnHold {
	for i := range s.MusicOnHold {
		if c := &s.MusicOnHold[i]; c.ID == id && id > 0 && len(c.Name) <= 32 && len(c.Name) > 0 && allIn(c.Name, "abcdefghijklmnopqrstuvwxyz0123456789_") {
			return c
		}
	}
	return nil
}

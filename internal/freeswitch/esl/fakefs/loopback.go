package fakefs

import (
	"strings"
	"time"

	"github.com/google/uuid"
)

// originateLoopback runs "originate {vars}loopback/<dest>/<context> <exten>
// XML <context>" the way mod_loopback and mod_dialplan_xml do when the fake
// has a dialplan URL:
//
//   - the -a leg (loopback/<dest>/<context>-a, outbound) carries every
//     originate variable;
//   - the -b leg (loopback/<dest>-b, inbound, in <context>) carries only the
//     originate's {} variables, and is routed through the dialplan with
//     them: no extension is NO_ROUTE_DESTINATION, a hangup action ends both
//     legs with its cause (-ERR <cause>), a bridge dials the far leg, which
//     answers (or fails with SetOriginateResult's cause);
//   - once answered the originate returns +OK and the -a leg routes <exten>
//     in the originate's context with its own variables, bridging what the
//     dialplan bridges, or hanging up with NO_ROUTE_DESTINATION.
func (s *Server) originateLoopback(leg dialString, id string, argv []string, opt func(int, string) string) string {
	parts := strings.Split(leg.endpoint, "/")
	dest, lbContext := parts[1], "default"
	if len(parts) > 2 && parts[2] != "" {
		lbContext = parts[2]
	}
	s.mu.Lock()
	if _, dup := s.channels[id]; dup {
		s.mu.Unlock()
		return "-ERR NORMAL_TEMPORARY_FAILURE\n"
	}
	a := s.newChannelLocked(id, "loopback/"+dest+"/"+lbContext+"-a", "outbound", "mod_loopback")
	a.Dest, a.Dialplan, a.Context = dest, opt(2, "XML"), opt(3, "default")
	a.CIDName = firstNonEmpty(leg.get("origination_caller_id_name"), opt(4, "FreeSWITCH"))
	a.CIDNum = firstNonEmpty(leg.get("origination_caller_id_number"), opt(5, "0000000000"))
	for _, v := range leg.vars {
		a.setVar(v.Name, v.Value)
	}
	b := s.newChannelLocked(uuid.NewString(), "loopback/"+dest+"-b", "inbound", "mod_loopback")
	b.Dest, b.Dialplan, b.Context = dest, "XML", lbContext
	b.CIDName, b.CIDNum = a.CIDName, a.CIDNum
	for _, v := range leg.vars {
		b.setVar(v.Name, v.Value)
	}
	a.loopPeer, b.loopPeer = b.UUID, a.UUID
	var fail string
	if len(s.failNext) > 0 {
		fail, s.failNext = s.failNext[0], s.failNext[1:]
	}
	s.emitChannelLocked("CHANNEL_CREATE", a, nil, nil)
	s.emitChannelLocked("CHANNEL_CREATE", b, nil, nil)
	s.progressLocked(a)
	bCopy := b.clone()
	s.mu.Unlock()

	far, cause := s.runDialplan(bCopy, lbContext)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, alive := s.channels[a.UUID]; !alive {
		return "-ERR ORIGINATOR_CANCEL\n"
	}
	if cause == "" && fail != "" {
		cause = fail
	}
	if cause != "" {
		s.hangupLocked(b, cause)
		return "-ERR " + cause + "\n"
	}
	if far != nil {
		if !s.dialFarLocked(b, *far) {
			return "-ERR ORIGINATOR_CANCEL\n"
		}
	}
	s.answerLocked(b)
	s.answerLocked(a)
	app := argv[1]
	if strings.HasPrefix(app, "&") {
		appName, appData, _ := strings.Cut(strings.TrimPrefix(app, "&"), "(")
		a.App, a.AppData = appName, strings.TrimSuffix(appData, ")")
		return "+OK " + id + "\n"
	}
	a.Dest = app
	aCopy := a.clone()
	go s.routeAnswered(aCopy)
	return "+OK " + id + "\n"
}

// runDialplan routes c in context and returns the dial string of the first
// bridge, or the hangup cause the dialplan (or its absence) gives.
func (s *Server) runDialplan(c Channel, context string) (*dialString, string) {
	step, err := s.routeChannel(c, context)
	if err != nil {
		s.opts.Logger.Debug("fakefs dialplan fetch failed", "err", err)
		return nil, "NO_ROUTE_DESTINATION"
	}
	if !step.found {
		return nil, "NO_ROUTE_DESTINATION"
	}
	for _, act := range step.actions {
		if far, cause, done := s.runAction(c.UUID, act.app, act.data); done {
			return far, cause
		}
	}
	return nil, ""
}

// runAction runs one dialplan application on channel id; done reports
// that the dialplan ends there (a bridge to dial, or a hangup cause).
// limit_execute's application holds its resource for as long as it runs:
// for a bridge that is until the call ends (the channel's hangup releases
// it); any other application returns at once and releases it.
func (s *Server) runAction(id, app, data string) (far *dialString, cause string, done bool) {
	switch app {
	case "set", "export":
		if k, v, ok := strings.Cut(data, "="); ok {
			s.setChannelVar(id, k, v)
		}
	case "hangup":
		return nil, firstNonEmpty(strings.TrimSpace(data), "NORMAL_CLEARING"), true
	case "bridge":
		d, ok := parseDial(data)
		if !ok {
			return nil, "DESTINATION_OUT_OF_ORDER", true // "Parse Error!": the bridge fails
		}
		return &d, "", true
	case "limit":
		if cause := s.runLimit(id, data); cause != "" {
			return nil, cause, true
		}
	case "limit_execute":
		argv, hold, max, ok := limitArgs(data, 6)
		if !ok || len(argv) < 6 || argv[0] != "hash" || !s.limitIncr(id, hold, max) {
			return nil, "", false // over the maximum: the application is skipped
		}
		far, cause, done = s.runAction(id, argv[4], argv[5])
		if far == nil {
			s.limitRelease(id, hold)
		}
		return far, cause, done
	}
	return nil, "", false
}

func (s *Server) setChannelVar(id, k, v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.channels[id]; ok {
		c.setVar(k, v)
	}
}

// dialFarLocked creates the leg that c's bridge dials, rings it, answers
// it and bridges it to c. It reports false when c hung up meanwhile.
// Caller holds s.mu; it is released while the leg rings.
func (s *Server) dialFarLocked(c *Channel, d dialString) bool {
	name, dest := legName(d.endpoint)
	far := s.newChannelLocked(firstNonEmpty(d.get("origination_uuid"), uuid.NewString()), name, "outbound", "mod_sofia")
	far.Dest, far.Context, far.Peer = dest, c.Context, c.UUID
	far.CIDName = firstNonEmpty(c.Var("effective_caller_id_name"), c.CIDName)
	far.CIDNum = firstNonEmpty(c.Var("effective_caller_id_number"), c.CIDNum)
	far.setVar("originator", c.UUID)
	if user, ok := strings.CutPrefix(d.endpoint, "user/"); ok {
		far.setVar("presence_id", user)
	}
	for _, v := range d.vars {
		far.setVar(v.Name, v.Value)
	}
	s.emitChannelLocked("CHANNEL_CREATE", far, nil, nil)
	s.progressLocked(far)
	if s.opts.RingDelay > 0 {
		s.mu.Unlock()
		time.Sleep(s.opts.RingDelay)
		s.mu.Lock()
	}
	if _, ok := s.channels[far.UUID]; !ok {
		return false
	}
	if _, ok := s.channels[c.UUID]; !ok {
		far.Peer = ""
		s.hangupLocked(far, "ORIGINATOR_CANCEL")
		return false
	}
	s.answerLocked(far)
	s.bridgeLocked(c, far)
	return true
}

// routeAnswered runs the originate's destination on the answered -a leg.
func (s *Server) routeAnswered(a Channel) {
	far, cause := s.runDialplan(a, a.Context)
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[a.UUID]
	if !ok {
		return
	}
	c.Dest = a.Dest
	if cause != "" {
		s.hangupLocked(c, cause)
		return
	}
	if far != nil {
		s.dialFarLocked(c, *far)
	}
}

package fakefs

import (
	"strings"
	"time"

	"github.com/google/uuid"
)

const originateUsage = "-USAGE: <call url> <exten>|&<application_name>(<app_args>) [<dialplan>] [<context>] [<cid_name>] [<cid_num>] [<timeout_sec>]\n"

// dialString is one parsed leg of an originate or bridge dial string.
type dialString struct {
	vars     []Header // {} variables, then [] variables
	endpoint string   // e.g. sofia/gateway/gw1/447700900123
}

func (d dialString) get(name string) string {
	v := ""
	for _, h := range d.vars {
		if h.Name == name {
			v = h.Value
		}
	}
	return v
}

// parseDial parses a dial string as switch_ivr_originate does: its <> and
// {} blocks (variables for every leg, see createBrackets), then the first
// leg of the first failover group ('|') with that leg's [] blocks. ok is
// false where FreeSWITCH logs "Parse Error!" and fails the originate.
func parseDial(s string) (d dialString, ok bool) {
	for _, open := range []byte{'<', '{'} {
		close := map[byte]byte{'<': '>', '{': '}'}[open]
		for len(s) > 0 && s[0] == open {
			vars, rest, ok := createBrackets(s, open, close, ',')
			if !ok {
				return d, false
			}
			d.vars, s = append(d.vars, vars...), rest
		}
	}
	s = strings.TrimLeft(s, " ")
	groups := splitLegs(s)
	if len(groups) == 0 || len(groups[0]) == 0 {
		return d, false
	}
	vars, endpoint, ok := legVars(groups[0][0])
	if !ok {
		return d, false
	}
	d.vars = append(d.vars, vars...)
	if i := strings.Index(endpoint, ":_:"); i >= 0 {
		endpoint = endpoint[:i]
	}
	d.endpoint = endpoint
	return d, true
}

// legName returns the channel name and destination number FreeSWITCH would
// give a leg dialled through endpoint.
func legName(endpoint string) (name, dest string) {
	parts := strings.Split(endpoint, "/")
	last := parts[len(parts)-1]
	switch {
	case len(parts) >= 4 && parts[0] == "sofia" && parts[1] == "gateway":
		return "sofia/external/" + last, last
	case len(parts) == 2 && parts[0] == "user":
		user, _, _ := strings.Cut(last, "@")
		return "sofia/internal/" + last, user
	case len(parts) >= 2 && parts[0] == "loopback":
		return "loopback/" + parts[1] + "-a", parts[1]
	default:
		user, _, _ := strings.Cut(last, "@")
		return endpoint, user
	}
}

// originate implements the originate API: it creates the A leg, rings and
// answers it, and for &bridge(...) also dials, answers and bridges a B leg.
func (s *Server) originate(args string) string {
	// mod_commands: switch_separate_string(cmd, ' ', argv, 10), which
	// strips quotes before the dial string is parsed.
	argv := separateString(args, ' ', 10)
	if len(argv) < 2 || len(argv) > 7 {
		return originateUsage
	}
	for i := range argv {
		if strings.EqualFold(argv[i], "undef") {
			argv[i] = ""
		}
	}
	opt := func(i int, def string) string {
		if i < len(argv) && argv[i] != "" {
			return argv[i]
		}
		return def
	}
	leg, ok := parseDial(argv[0])
	if !ok {
		return "-ERR DESTINATION_OUT_OF_ORDER\n"
	}
	name, dest := legName(leg.endpoint)
	id := leg.get("origination_uuid")
	if id == "" {
		id = uuid.NewString()
	}
	if strings.HasPrefix(leg.endpoint, "loopback/") && s.xmlCurlURL() != "" {
		return s.originateLoopback(leg, id, argv, opt)
	}

	s.mu.Lock()
	if _, dup := s.channels[id]; dup {
		s.mu.Unlock()
		return "-ERR NORMAL_TEMPORARY_FAILURE\n"
	}
	a := s.newChannelLocked(id, name, "outbound", "src/switch_ivr_originate.c")
	a.Dest, a.Dialplan, a.Context = dest, opt(2, "XML"), opt(3, "default")
	a.CIDName = firstNonEmpty(leg.get("origination_caller_id_name"), opt(4, "FreeSWITCH"))
	a.CIDNum = firstNonEmpty(leg.get("origination_caller_id_number"), opt(5, "0000000000"))
	for _, v := range leg.vars {
		a.setVar(v.Name, v.Value)
	}
	var fail string
	if len(s.failNext) > 0 {
		fail, s.failNext = s.failNext[0], s.failNext[1:]
	}
	s.emitChannelLocked("CHANNEL_CREATE", a, nil, nil)
	s.progressLocked(a)
	s.mu.Unlock()

	time.Sleep(s.opts.RingDelay)

	s.mu.Lock()
	defer s.mu.Unlock()
	if _, alive := s.channels[id]; !alive {
		return "-ERR ORIGINATOR_CANCEL\n"
	}
	if fail != "" {
		s.hangupLocked(a, fail)
		return "-ERR " + fail + "\n"
	}
	s.answerLocked(a)
	app := argv[1]
	if !strings.HasPrefix(app, "&") {
		// Routed through the dialplan to exten once answered.
		a.Dest = app
		return "+OK " + id + "\n"
	}
	appName, appData, _ := strings.Cut(strings.TrimPrefix(app, "&"), "(")
	a.App, a.AppData = appName, strings.TrimSuffix(appData, ")")
	if appName == "bridge" {
		s.bridgeLeg(a)
	}
	return "+OK " + id + "\n"
}

// bridgeLeg dials the B leg of a's bridge application and bridges it.
// Caller holds s.mu; it is released while B rings.
func (s *Server) bridgeLeg(a *Channel) {
	leg, ok := parseDial(a.AppData)
	if !ok {
		return // FreeSWITCH: "Parse Error!", the bridge dials nothing
	}
	name, dest := legName(leg.endpoint)
	id := leg.get("origination_uuid")
	if id == "" {
		id = uuid.NewString()
	}
	if _, dup := s.channels[id]; dup {
		return
	}
	b := s.newChannelLocked(id, name, "outbound", "mod_sofia")
	b.Dest, b.Context, b.Peer = dest, a.Context, a.UUID
	b.CIDName = firstNonEmpty(leg.get("origination_caller_id_name"), a.CIDName)
	b.CIDNum = firstNonEmpty(leg.get("origination_caller_id_number"), a.CIDNum)
	b.setVar("originator", a.UUID)
	for _, v := range leg.vars {
		b.setVar(v.Name, v.Value)
	}
	s.emitChannelLocked("CHANNEL_CREATE", b, nil, nil)
	s.progressLocked(b)
	if s.opts.RingDelay > 0 {
		s.mu.Unlock()
		time.Sleep(s.opts.RingDelay)
		s.mu.Lock()
	}
	_, aliveA := s.channels[a.UUID]
	_, aliveB := s.channels[b.UUID]
	switch {
	case !aliveB:
		return
	case !aliveA:
		b.Peer = ""
		s.hangupLocked(b, "ORIGINATOR_CANCEL")
		return
	}
	s.answerLocked(b)
	s.bridgeLocked(a, b)
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}

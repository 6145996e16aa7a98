package fakefs

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// runAPI executes one API command line ("uuid_kill <uuid>") and returns the
// body FreeSWITCH would write.
func (s *Server) runAPI(cmdline string) string {
	cmdline = strings.TrimSpace(cmdline)
	if body, ok := s.scriptedReply(cmdline); ok {
		return body
	}
	cmd, args, _ := strings.Cut(cmdline, " ")
	args = strings.TrimSpace(args)
	switch cmd {
	case "":
		return "-ERR no reply\n"
	case "originate":
		return s.originate(args)
	case "uuid_kill":
		return s.uuidKill(args)
	case "uuid_transfer":
		return s.uuidTransfer(args)
	case "uuid_record":
		return s.uuidRecord(args)
	case "uuid_hold":
		return s.uuidHold(args)
	case "uuid_exists":
		_, ok := s.Channel(args)
		return strconv.FormatBool(ok)
	case "uuid_getvar":
		return s.uuidGetvar(args)
	case "uuid_setvar":
		return s.uuidSetvar(args)
	case "uuid_bridge":
		return s.uuidBridge(args)
	case "show":
		return s.show(args)
	case "status":
		return s.status()
	case "echo":
		return args
	case "global_getvar":
		return s.globalGetvar(args)
	case "xml_flush_cache":
		return "+OK cleared 0 entries\n"
	case "callcenter_config":
		return s.callcenterConfig(args)
	case "reloadxml":
		return "+OK [Success]\n"
	case "local_stream":
		return s.localStream(args)
	case "sofia":
		return s.sofia(args)
	case "vm_inject", "voicemail_inject":
		return s.vmInject(args)
	case "vm_list":
		return s.vmList(args)
	case "vm_read":
		return s.vmRead(args)
	default:
		return "-ERR " + cmd + " Command not found!\n"
	}
}

// runBackground runs a bgapi command and fires its BACKGROUND_JOB event.
func (s *Server) runBackground(job, cmdline string) {
	cmdline = strings.TrimSpace(cmdline)
	out := s.runAPI(cmdline)
	time.Sleep(s.opts.JobDelay)
	cmd, args, _ := strings.Cut(cmdline, " ")
	h := []Header{{"Job-UUID", job}, {"Job-Owner-UUID", ""}, {"Job-Command", cmd}}
	if args = strings.TrimSpace(args); args != "" {
		h = append(h, Header{"Job-Command-Arg", args})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	all := append(s.stdHeadersLocked("BACKGROUND_JOB"), h...)
	s.deliverLocked("BACKGROUND_JOB", all, out)
}

func (s *Server) uuidKill(args string) string {
	f := strings.Fields(args)
	if len(f) == 0 {
		return "-USAGE: <uuid> [cause]\n"
	}
	cause := ""
	if len(f) > 1 {
		cause = f[1]
	}
	if err := s.Hangup(f[0], cause); err != nil {
		return "-ERR No such channel!\n"
	}
	return "+OK\n"
}

func (s *Server) uuidTransfer(args string) string {
	f := strings.Fields(args)
	if len(f) < 2 {
		return "-USAGE: <uuid> [-bleg|-both] <dest-exten> [<dialplan>] [<context>]\n"
	}
	id, rest := f[0], f[1:]
	which := ""
	if rest[0] == "-bleg" || rest[0] == "-both" {
		which, rest = rest[0], rest[1:]
	}
	if len(rest) == 0 {
		return "-USAGE: <uuid> [-bleg|-both] <dest-exten> [<dialplan>] [<context>]\n"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[id]
	if !ok {
		return "-ERR No such channel!\n"
	}
	legs := []*Channel{c}
	peer, hasPeer := s.channels[c.Peer]
	switch {
	case which == "-bleg" && !hasPeer:
		return "-ERR\n"
	case which == "-bleg":
		legs = []*Channel{peer}
	case which == "-both" && hasPeer:
		legs = append(legs, peer)
	}
	if hasPeer && !c.bridged.IsZero() {
		s.unbridgeLocked(c)
		c.Peer, peer.Peer = "", ""
		c.bridged, peer.bridged = time.Time{}, time.Time{}
	}
	for _, l := range legs {
		l.Dest = rest[0]
		if len(rest) > 1 {
			l.Dialplan = rest[1]
		}
		if len(rest) > 2 {
			l.Context = rest[2]
		}
		l.App, l.AppData = "", ""
		l.transfered = time.Now()
	}
	return "+OK\n"
}

func (s *Server) uuidRecord(args string) string {
	f := strings.Fields(args)
	if len(f) < 3 {
		return "-USAGE: <uuid> [start|stop|mask|unmask|pause|resume] <path> [<limit>] [<recording_vars>]\n"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[f[0]]
	if !ok {
		return "-ERR Cannot locate session!\n"
	}
	path := f[2]
	switch f[1] {
	case "start":
		c.Recordings = append(c.Recordings, path)
		s.emitChannelLocked("RECORD_START", c, nil, []Header{{"Record-File-Path", path}})
	case "stop":
		var stopped []string
		kept := c.Recordings[:0]
		for _, r := range c.Recordings {
			if r == path || path == "all" {
				stopped = append(stopped, r)
			} else {
				kept = append(kept, r)
			}
		}
		c.Recordings = kept
		if len(stopped) == 0 {
			return "-ERR Cannot stop record session!\n"
		}
		for _, r := range stopped {
			s.emitChannelLocked("RECORD_STOP", c, nil, []Header{{"Record-File-Path", r}})
		}
	case "mask", "unmask", "pause", "resume":
	default:
		return "-USAGE: <uuid> [start|stop|mask|unmask|pause|resume] <path> [<limit>] [<recording_vars>]\n"
	}
	return "+OK Success\n"
}

func (s *Server) uuidHold(args string) string {
	f := strings.Fields(args)
	mode := "on"
	if len(f) > 0 && (f[0] == "off" || f[0] == "toggle") {
		mode, f = f[0], f[1:]
	}
	if len(f) == 0 {
		return "-USAGE: [off|toggle] <uuid> [<display>]\n"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[f[0]]
	if !ok {
		return "-ERR Operation failed\n"
	}
	on := mode == "on" || (mode == "toggle" && !c.Held)
	if on != c.Held {
		s.holdLocked(c, on)
	}
	return "+OK Success\n"
}

func (s *Server) uuidGetvar(args string) string {
	f := strings.Fields(args)
	if len(f) < 2 {
		return "-USAGE: <uuid> <var>\n"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[f[0]]
	if !ok {
		return "-ERR No such channel!\n"
	}
	if v := c.Var(f[1]); v != "" {
		return v
	}
	return "_undef_"
}

func (s *Server) uuidSetvar(args string) string {
	f := strings.SplitN(args, " ", 3)
	if len(f) < 2 || f[0] == "" || f[1] == "" {
		return "-USAGE: <uuid> <var> [value]\n"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[f[0]]
	if !ok {
		return "-ERR No such channel!\n"
	}
	v := ""
	if len(f) == 3 {
		v = f[2]
	}
	c.setVar(f[1], v)
	return "+OK\n"
}

func (s *Server) uuidBridge(args string) string {
	f := strings.Fields(args)
	if len(f) != 2 {
		return "-USAGE: <uuid> <other_uuid>\n"
	}
	if err := s.Bridge(f[0], f[1]); err != nil {
		return "-ERR Invalid uuid\n"
	}
	return "+OK " + f[1] + "\n"
}

// channelColumns are the columns of FreeSWITCH's channels table, in order.
var channelColumns = []string{
	"uuid", "direction", "created", "created_epoch", "name", "state", "cid_name", "cid_num",
	"ip_addr", "dest", "application", "application_data", "dialplan", "context", "read_codec",
	"read_rate", "read_bit_rate", "write_codec", "write_rate", "write_bit_rate", "secure",
	"hostname", "presence_id", "presence_data", "accountcode", "callstate", "callee_name",
	"callee_num", "callee_direction", "call_uuid", "sent_callee_name", "sent_callee_num",
	"initial_cid_name", "initial_cid_num", "initial_ip_addr", "initial_dest", "initial_dialplan",
	"initial_context",
}

func (s *Server) show(args string) string {
	f := strings.Fields(args)
	if len(f) == 0 || f[0] != "channels" {
		return "-USAGE: codec|endpoint|application|api|dialplan|file|timer|calls [count]|channels [count|like <match string>]|calls|detailed_calls|bridged_calls|detailed_bridged_calls|aliases|complete|chat|management|modules|nat_map|say|interfaces|interface_types|tasks|limits|status\n"
	}
	asJSON := len(f) >= 3 && f[1] == "as" && f[2] == "json"
	chans := s.Channels()
	if !asJSON {
		var b strings.Builder
		b.WriteString(strings.Join(channelColumns, ",") + "\n")
		for _, c := range chans {
			b.WriteString(strings.Join(s.channelRow(c), ",") + "\n")
		}
		fmt.Fprintf(&b, "\n%d total.\n", len(chans))
		return b.String()
	}
	if len(chans) == 0 {
		return "{\"row_count\": 0}\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, `{"row_count":%d,"rows":[`, len(chans))
	for i, c := range chans {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('{')
		for j, v := range s.channelRow(c) {
			if j > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(channelColumns[j])
			vb, _ := json.Marshal(v)
			b.Write(kb)
			b.WriteByte(':')
			b.Write(vb)
		}
		b.WriteByte('}')
	}
	b.WriteString("]}\n")
	return b.String()
}

// channelRow returns c's values in channelColumns order.
func (s *Server) channelRow(c Channel) []string {
	cidName, cidNum := c.CIDName, c.CIDNum
	return []string{
		c.UUID, c.Direction, c.Created.Local().Format("2006-01-02 15:04:05"),
		strconv.FormatInt(c.Created.Unix(), 10), c.Name, c.State, cidName, cidNum,
		"", c.Dest, c.App, c.AppData, c.Dialplan, c.Context, "PCMU",
		"8000", "64000", "PCMU", "8000", "64000", "",
		s.opts.Hostname, c.Var("presence_id"), "", c.Var("accountcode"), c.CallState, "",
		"", "", c.UUID, "", "",
		cidName, cidNum, "", c.Dest, c.Dialplan,
		c.Context,
	}
}

func (s *Server) status() string {
	s.mu.Lock()
	n, total := len(s.channels), s.sessions
	s.mu.Unlock()
	return fmt.Sprintf("UP 0 years, 0 days, 0 hours, 0 minutes, 1 second, 0 milliseconds, 0 microseconds\n"+
		"FreeSWITCH (Version 1.10.12-release fakefs 64bit) is ready\n"+
		"%d session(s) since startup\n"+
		"%d session(s) - peak %d, last 5min %d \n"+
		"0 session(s) per Sec out of max 100, peak 0, last 5min 0 \n"+
		"1000 session(s) max\n"+
		"min idle cpu 0.00/99.00\n"+
		"Current Stack Size/Max 240K/8192K\n", total, n, n, n)
}

// globalGetvar answers global_getvar for the globals the fake knows:
// core_uuid (new at every start), hostname and switchname; others are
// empty, as unset globals are.
func (s *Server) globalGetvar(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch strings.TrimSpace(name) {
	case "core_uuid":
		return s.coreUUID
	case "hostname", "switchname":
		return s.opts.Hostname
	}
	return ""
}

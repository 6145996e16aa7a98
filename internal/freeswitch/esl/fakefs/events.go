package fakefs

import (
	"strconv"
	"time"
)

// callingSite names the FreeSWITCH source location written in
// Event-Calling-File/-Function, per event.
var callingSite = map[string][2]string{
	"CHANNEL_CREATE":          {"switch_core_state_machine.c", "switch_core_session_run"},
	"CHANNEL_PROGRESS":        {"switch_channel.c", "switch_channel_perform_mark_ring_ready_value"},
	"CHANNEL_ANSWER":          {"switch_channel.c", "switch_channel_perform_mark_answered"},
	"CHANNEL_BRIDGE":          {"switch_ivr_bridge.c", "switch_ivr_multi_threaded_bridge"},
	"CHANNEL_UNBRIDGE":        {"switch_ivr_bridge.c", "switch_ivr_multi_threaded_bridge"},
	"CHANNEL_HOLD":            {"switch_channel.c", "switch_channel_perform_mark_hold"},
	"CHANNEL_UNHOLD":          {"switch_channel.c", "switch_channel_perform_mark_hold"},
	"CHANNEL_HANGUP":          {"switch_channel.c", "switch_channel_perform_hangup"},
	"CHANNEL_HANGUP_COMPLETE": {"switch_core_state_machine.c", "switch_core_session_reporting_state"},
	"CHANNEL_DESTROY":         {"switch_core_session.c", "switch_core_session_perform_destroy"},
	"RECORD_START":            {"switch_ivr_async.c", "record_callback"},
	"RECORD_STOP":             {"switch_ivr_async.c", "record_callback"},
	"BACKGROUND_JOB":          {"mod_event_socket.c", "api_exec"},
	"MESSAGE_WAITING":         {"mod_voicemail.c", "update_mwi"},
}

var stateNumber = map[string]string{
	"CS_NEW": "0", "CS_INIT": "1", "CS_ROUTING": "2", "CS_SOFT_EXECUTE": "3", "CS_EXECUTE": "4",
	"CS_EXCHANGE_MEDIA": "5", "CS_PARK": "6", "CS_CONSUME_MEDIA": "7", "CS_HIBERNATE": "8",
	"CS_RESET": "9", "CS_HANGUP": "10", "CS_REPORTING": "11", "CS_DESTROY": "12",
}

// stdHeadersLocked builds the standard block every FreeSWITCH event starts
// with and takes the next Event-Sequence. Caller holds s.mu.
func (s *Server) stdHeadersLocked(name string) []Header {
	return s.appendStdHeadersLocked(make([]Header, 0, 16), name)
}

// appendStdHeadersLocked appends the standard block to h (see
// stdHeadersLocked).
func (s *Server) appendStdHeadersLocked(h []Header, name string) []Header {
	s.seq++
	now := time.Now()
	site, ok := callingSite[name]
	if !ok {
		site = [2]string{"fakefs.go", "fakefs_emit"}
	}
	local, gmt := s.datesLocked(now)
	return append(h,
		Header{"Event-Name", name},
		Header{"Core-UUID", s.coreUUID},
		Header{"FreeSWITCH-Hostname", s.opts.Hostname},
		Header{"FreeSWITCH-Switchname", s.opts.Hostname},
		Header{"FreeSWITCH-IPv4", s.opts.IPv4},
		Header{"FreeSWITCH-IPv6", "::1"},
		Header{"Event-Date-Local", local},
		Header{"Event-Date-GMT", gmt},
		Header{"Event-Date-Timestamp", strconv.FormatInt(now.UnixMicro(), 10)},
		Header{"Event-Calling-File", site[0]},
		Header{"Event-Calling-Function", site[1]},
		Header{"Event-Calling-Line-Number", "1"},
		Header{"Event-Sequence", strconv.FormatUint(s.seq, 10)},
	)
}

// datesLocked returns Event-Date-Local and Event-Date-GMT for now. Both
// have one-second resolution, so they are formatted once per second.
// Caller holds s.mu.
func (s *Server) datesLocked(now time.Time) (local, gmt string) {
	if sec := now.Unix(); sec != s.dateSec || s.dateLocal == "" {
		s.dateSec = sec
		s.dateLocal = now.Local().Format("2006-01-02 15:04:05")
		s.dateGMT = now.UTC().Format("Mon, 02 Jan 2006 15:04:05 GMT")
	}
	return s.dateLocal, s.dateGMT
}

// deliverLocked sends a finished event to every connection subscribed to
// it. Holding s.mu across sequence assignment and queuing keeps each
// connection's events in Event-Sequence order. Each format is serialised
// once, however many connections take it (frames are never modified after
// they are queued).
func (s *Server) deliverLocked(name string, headers []Header, body string) {
	var plain, js []byte
	for id := 1; id <= s.nextConn; id++ {
		c, ok := s.conns[id]
		if !ok {
			continue
		}
		format, ok := c.wants(name, headers)
		if !ok {
			continue
		}
		if format == "json" {
			if js == nil {
				js = jsonEvent(headers, body)
			}
			c.sendEvent(js)
		} else {
			if plain == nil {
				plain = plainEvent(headers, body)
			}
			c.sendEvent(plain)
		}
	}
}

// anyWantsLocked reports whether some connection is subscribed to event
// name, before filters; when none is, the event need not be built.
func (s *Server) anyWantsLocked(name string) bool {
	for _, c := range s.conns {
		if c.subscribed(name) {
			return true
		}
	}
	return false
}

// EmitEvent sends an arbitrary event: the standard block (with the next
// Event-Sequence) followed by headers, and body if not empty.
func (s *Server) EmitEvent(name string, headers []Header, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all := append(s.stdHeadersLocked(name), headers...)
	s.deliverLocked(name, all, body)
}

// emitChannelLocked emits a channel event for c: standard block, before,
// the channel data of switch_channel_event_set_data with every variable,
// then after. An event no connection subscribes to still takes its
// Event-Sequence, as in FreeSWITCH, but is not built.
func (s *Server) emitChannelLocked(name string, c *Channel, before, after []Header) {
	if !s.anyWantsLocked(name) {
		s.seq++
		return
	}
	// The headers are only read while the event is serialised below, so
	// one buffer serves every channel event.
	h := s.appendStdHeadersLocked(s.hdrBuf[:0], name)
	if c.HangupCause != "" {
		h = append(h, Header{"Hangup-Cause", c.HangupCause})
	}
	h = append(h, before...)
	h = s.appendChannelData(h, c)
	h = append(h, after...)
	s.deliverLocked(name, h, "")
	clear(h)
	s.hdrBuf = h[:0]
}

// appendChannelData appends the channel data of
// switch_channel_event_set_data for c, variables included.
func (s *Server) appendChannelData(h []Header, c *Channel) []Header {
	hit := "false"
	if c.Direction == "inbound" {
		hit = "true"
	}
	h = append(h,
		Header{"Channel-State", c.State},
		Header{"Channel-Call-State", c.CallState},
		Header{"Channel-State-Number", stateNumber[c.State]},
		Header{"Channel-Name", c.Name},
		Header{"Unique-ID", c.UUID},
		Header{"Call-Direction", c.Direction},
		Header{"Presence-Call-Direction", c.Direction},
		Header{"Channel-HIT-Dialplan", hit},
		Header{"Channel-Call-UUID", c.UUID},
		Header{"Answer-State", c.AnswerState},
	)
	if c.HangupCause != "" {
		h = append(h, Header{"Hangup-Cause", c.HangupCause})
	}
	h = append(h,
		Header{"Channel-Read-Codec-Name", "PCMU"},
		Header{"Channel-Read-Codec-Rate", "8000"},
		Header{"Channel-Read-Codec-Bit-Rate", "64000"},
		Header{"Channel-Write-Codec-Name", "PCMU"},
		Header{"Channel-Write-Codec-Rate", "8000"},
		Header{"Channel-Write-Codec-Bit-Rate", "64000"},
	)
	h = appendProfile(h, &callerNames, c)
	if p, ok := s.channels[c.Peer]; ok && c.Peer != "" {
		other := "originator"
		if c.originator {
			other = "originatee"
		}
		h = append(h, Header{"Other-Type", other})
		h = appendProfile(h, &otherLegNames, p)
	}
	h = append(h,
		Header{"variable_direction", c.Direction},
		Header{"variable_uuid", c.UUID},
		Header{"variable_call_uuid", c.UUID},
		Header{"variable_channel_name", c.Name},
	)
	for _, v := range c.Vars {
		h = append(h, Header{"variable_" + v.Name, v.Value})
	}
	return h
}

// profileFields are the caller profile fields in wire order.
var profileFields = [...]string{
	"Direction", "Logical-Direction", "Dialplan", "Caller-ID-Name", "Caller-ID-Number", "ANI",
	"Destination-Number", "Unique-ID", "Source", "Context", "Channel-Name", "Profile-Index",
	"Profile-Created-Time", "Channel-Created-Time", "Channel-Answered-Time",
	"Channel-Progress-Time", "Channel-Progress-Media-Time", "Channel-Hangup-Time",
	"Channel-Transfer-Time", "Channel-Resurrect-Time", "Channel-Bridged-Time",
	"Channel-Last-Hold", "Channel-Hold-Accum", "Screen-Bit", "Privacy-Hide-Name",
	"Privacy-Hide-Number",
}

type profileNames [len(profileFields)]string

// The header names of both profiles, joined once instead of per event.
var (
	callerNames   = prefixed("Caller-")
	otherLegNames = prefixed("Other-Leg-")
)

func prefixed(prefix string) profileNames {
	var n profileNames
	for i, f := range profileFields {
		n[i] = prefix + f
	}
	return n
}

// appendProfile appends a caller profile with the header names in names
// (profileFields under one prefix); empty text fields are left out, as
// switch_caller_profile_event_set_data does.
func appendProfile(h []Header, names *profileNames, c *Channel) []Header {
	i := 0
	add := func(v string, always bool) {
		if v != "" || always {
			h = append(h, Header{names[i], v})
		}
		i++
	}
	us := func(t time.Time) string { return strconv.FormatInt(uepoch(t), 10) }
	add(c.Direction, true)
	add(c.Direction, true)
	add(c.Dialplan, false)
	add(c.CIDName, false)
	add(c.CIDNum, false)
	add(c.CIDNum, false)
	add(c.Dest, false)
	add(c.UUID, true)
	add(c.source, false)
	add(c.Context, false)
	add(c.Name, true)
	add("1", true)
	add(us(c.Created), true)
	add(us(c.Created), true)
	add(us(c.Answered), true)
	add(us(c.progressed), true)
	add("0", true)
	add(us(c.hungUp), true)
	add(us(c.transfered), true)
	add("0", true)
	add(us(c.bridged), true)
	add("0", true)
	add("0", true)
	add("true", true)
	add("false", true)
	add("false", true)
	return h
}

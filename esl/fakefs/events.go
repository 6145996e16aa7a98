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
}

var stateNumber = map[string]string{
	"CS_NEW": "0", "CS_INIT": "1", "CS_ROUTING": "2", "CS_SOFT_EXECUTE": "3", "CS_EXECUTE": "4",
	"CS_EXCHANGE_MEDIA": "5", "CS_PARK": "6", "CS_CONSUME_MEDIA": "7", "CS_HIBERNATE": "8",
	"CS_RESET": "9", "CS_HANGUP": "10", "CS_REPORTING": "11", "CS_DESTROY": "12",
}

// stdHeadersLocked builds the standard block every FreeSWITCH event starts
// with and takes the next Event-Sequence. Caller holds s.mu.
func (s *Server) stdHeadersLocked(name string) []Header {
	s.seq++
	now := time.Now()
	site, ok := callingSite[name]
	if !ok {
		site = [2]string{"fakefs.go", "fakefs_emit"}
	}
	return []Header{
		{"Event-Name", name},
		{"Core-UUID", s.opts.CoreUUID},
		{"FreeSWITCH-Hostname", s.opts.Hostname},
		{"FreeSWITCH-Switchname", s.opts.Hostname},
		{"FreeSWITCH-IPv4", s.opts.IPv4},
		{"FreeSWITCH-IPv6", "::1"},
		{"Event-Date-Local", now.Local().Format("2006-01-02 15:04:05")},
		{"Event-Date-GMT", now.UTC().Format("Mon, 02 Jan 2006 15:04:05 GMT")},
		{"Event-Date-Timestamp", strconv.FormatInt(now.UnixMicro(), 10)},
		{"Event-Calling-File", site[0]},
		{"Event-Calling-Function", site[1]},
		{"Event-Calling-Line-Number", "1"},
		{"Event-Sequence", strconv.FormatUint(s.seq, 10)},
	}
}

// deliverLocked sends a finished event to every connection subscribed to
// it. Holding s.mu across sequence assignment and queuing keeps each
// connection's events in Event-Sequence order.
func (s *Server) deliverLocked(name string, headers []Header, body string) {
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
			c.sendEvent(jsonEvent(headers, body))
		} else {
			c.sendEvent(plainEvent(headers, body))
		}
	}
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
// then after.
func (s *Server) emitChannelLocked(name string, c *Channel, before, after []Header) {
	h := s.stdHeadersLocked(name)
	if c.HangupCause != "" {
		h = append(h, Header{"Hangup-Cause", c.HangupCause})
	}
	h = append(h, before...)
	h = append(h, s.channelData(c)...)
	h = append(h, after...)
	s.deliverLocked(name, h, "")
}

func (s *Server) channelData(c *Channel) []Header {
	hit := "false"
	if c.Direction == "inbound" {
		hit = "true"
	}
	h := []Header{
		{"Channel-State", c.State},
		{"Channel-Call-State", c.CallState},
		{"Channel-State-Number", stateNumber[c.State]},
		{"Channel-Name", c.Name},
		{"Unique-ID", c.UUID},
		{"Call-Direction", c.Direction},
		{"Presence-Call-Direction", c.Direction},
		{"Channel-HIT-Dialplan", hit},
		{"Channel-Call-UUID", c.UUID},
		{"Answer-State", c.AnswerState},
	}
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
	h = append(h, s.profile("Caller-", c)...)
	if p, ok := s.channels[c.Peer]; ok && c.Peer != "" {
		other := "originator"
		if c.originator {
			other = "originatee"
		}
		h = append(h, Header{"Other-Type", other})
		h = append(h, s.profile("Other-Leg-", p)...)
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

// profile renders a caller profile under prefix; empty text fields are
// left out, as switch_caller_profile_event_set_data does.
func (s *Server) profile(prefix string, c *Channel) []Header {
	var h []Header
	add := func(name, v string, always bool) {
		if v != "" || always {
			h = append(h, Header{prefix + name, v})
		}
	}
	us := func(t time.Time) string { return strconv.FormatInt(uepoch(t), 10) }
	add("Direction", c.Direction, true)
	add("Logical-Direction", c.Direction, true)
	add("Dialplan", c.Dialplan, false)
	add("Caller-ID-Name", c.CIDName, false)
	add("Caller-ID-Number", c.CIDNum, false)
	add("ANI", c.CIDNum, false)
	add("Destination-Number", c.Dest, false)
	add("Unique-ID", c.UUID, true)
	add("Source", c.source, false)
	add("Context", c.Context, false)
	add("Channel-Name", c.Name, true)
	add("Profile-Index", "1", true)
	add("Profile-Created-Time", us(c.Created), true)
	add("Channel-Created-Time", us(c.Created), true)
	add("Channel-Answered-Time", us(c.Answered), true)
	add("Channel-Progress-Time", us(c.progressed), true)
	add("Channel-Progress-Media-Time", "0", true)
	add("Channel-Hangup-Time", us(c.hungUp), true)
	add("Channel-Transfer-Time", us(c.transfered), true)
	add("Channel-Resurrect-Time", "0", true)
	add("Channel-Bridged-Time", us(c.bridged), true)
	add("Channel-Last-Hold", "0", true)
	add("Channel-Hold-Accum", "0", true)
	add("Screen-Bit", "true", true)
	add("Privacy-Hide-Name", "false", true)
	add("Privacy-Hide-Number", "false", true)
	return h
}

// Package esl talks to FreeSWITCH nodes over the inbound event socket.
package esl

import (
	"net/textproto"
	"strconv"
)

// Event is one FreeSWITCH event as received on the event socket. Header
// values are URL-decoded; names are kept in canonical MIME form (eslgo's
// reader canonicalises them: "Unique-ID" arrives as "Unique-Id"), so read
// them through Get, which canonicalises the name it is given.
type Event struct {
	// Node is the name of the FreeSWITCH node the event came from.
	Node    string
	Headers map[string]string
	Body    string
}

// Get returns the value of header name ("" when absent or "_undef_").
func (e Event) Get(name string) string {
	return e.value(canonical(name))
}

// value returns the value of the header with canonical name key.
func (e Event) value(key string) string {
	v := e.Headers[key]
	if v == "_undef_" {
		return ""
	}
	return v
}

// Name returns the Event-Name header.
func (e Event) Name() string { return e.Get("Event-Name") }

// Var returns the channel variable name (the variable_<name> header).
func (e Event) Var(name string) string {
	if key, ok := canonicalVars[name]; ok {
		return e.value(key)
	}
	return e.Get("variable_" + name)
}

// knownHeaders are header names that Switchboard reads from every event;
// knownVars likewise for channel variables.
var (
	knownHeaders = []string{
		"Answer-State", "Bridge-A-Unique-ID", "Bridge-B-Unique-ID", "Call-Direction",
		"Caller-Caller-ID-Name", "Caller-Caller-ID-Number", "Caller-Channel-Answered-Time",
		"Caller-Channel-Bridged-Time", "Caller-Channel-Created-Time", "Caller-Channel-Hangup-Time",
		"Caller-Context", "Caller-Destination-Number", "Channel-Call-UUID", "Channel-Name",
		"Core-UUID", "Event-Date-Timestamp", "Event-Name", "Event-Sequence", "FreeSWITCH-Switchname",
		"Hangup-Cause", "Job-UUID", "Other-Leg-Unique-ID", "Record-File-Path", "Unique-ID",
	}
	knownVars = []string{
		"billsec", "duration", "hangup_cause", "presence_id", "sb_ext", "sb_tenant", "user_context",
	}
)

// canonicalHeaders and canonicalVars hold the canonical forms of the known
// names, computed once: canonicalising "Unique-ID" allocates, and Get runs
// a few dozen times per event. They are never written after init.
var (
	canonicalHeaders = func() map[string]string {
		m := make(map[string]string, 2*len(knownHeaders))
		for _, n := range knownHeaders {
			c := textproto.CanonicalMIMEHeaderKey(n)
			m[n], m[c] = c, c
		}
		return m
	}()
	canonicalVars = func() map[string]string {
		m := make(map[string]string, len(knownVars))
		for _, n := range knownVars {
			m[n] = textproto.CanonicalMIMEHeaderKey("variable_" + n)
		}
		return m
	}()
)

// canonical returns textproto.CanonicalMIMEHeaderKey(name), from the table
// when name is a known one.
func canonical(name string) string {
	if c, ok := canonicalHeaders[name]; ok {
		return c
	}
	return textproto.CanonicalMIMEHeaderKey(name)
}

// Sequence returns Event-Sequence, FreeSWITCH's per-node event counter (0 when absent).
func (e Event) Sequence() uint64 {
	n, _ := strconv.ParseUint(e.Get("Event-Sequence"), 10, 64)
	return n
}

// NewEvent builds an Event from headers written the way FreeSWITCH writes
// them; names are canonicalised.
func NewEvent(node string, headers map[string]string, body string) Event {
	h := make(map[string]string, len(headers))
	for k, v := range headers {
		h[textproto.CanonicalMIMEHeaderKey(k)] = v
	}
	return Event{Node: node, Headers: h, Body: body}
}

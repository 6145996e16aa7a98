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
	v := e.Headers[textproto.CanonicalMIMEHeaderKey(name)]
	if v == "_undef_" {
		return ""
	}
	return v
}

// Name returns the Event-Name header.
func (e Event) Name() string { return e.Get("Event-Name") }

// Var returns the channel variable name (the variable_<name> header).
func (e Event) Var(name string) string { return e.Get("variable_" + name) }

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

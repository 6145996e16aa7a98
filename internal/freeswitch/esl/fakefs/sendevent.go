package fakefs

import (
	"net/textproto"
	"sort"
	"strings"

	"github.com/google/uuid"
)

// SentEvent is an event a client fired with "sendevent <name>": its name as
// written and its header lines (keys in canonical MIME form; FreeSWITCH
// compares header names without regard to case).
type SentEvent struct {
	Name    string
	Headers map[string]string
	Body    string
	// Known is false when the name is no FreeSWITCH event type: the real
	// switch then fires the event as its internal CLONE type, which no
	// listener of that name (sofia's MWI handler, for one) receives.
	Known bool
}

// Get returns a header by name, case-insensitively.
func (e SentEvent) Get(name string) string {
	return e.Headers[textproto.CanonicalMIMEHeaderKey(name)]
}

// knownEvents are the event type names switch_name_event accepts that the
// fake's users send (a subset of FreeSWITCH's table).
var knownEvents = map[string]bool{
	"CUSTOM": true, "MESSAGE_WAITING": true, "MESSAGE_QUERY": true, "NOTIFY": true,
	"PRESENCE_IN": true, "PRESENCE_OUT": true, "PRESENCE_PROBE": true, "SEND_MESSAGE": true,
	"RECV_MESSAGE": true, "RELOADXML": true, "GENERAL": true, "COMMAND": true,
}

// SentEvents returns the events clients fired with sendevent, in order.
func (s *Server) SentEvents() []SentEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SentEvent(nil), s.sent...)
}

// sendEvent runs "sendevent <name>" as mod_event_socket does: the header
// lines become the event's headers (plus Command and a new Event-UUID),
// the event is fired to every subscribed listener, and the reply is
// "+OK <Event-UUID>", whatever the name (an unknown one is fired as CLONE,
// delivered here to nobody).
func (s *Server) sendEvent(line string, hdr map[string]string, body string) string {
	name := strings.TrimSpace(line)
	id := uuid.NewString()
	known := knownEvents[strings.ToUpper(name)]
	ev := SentEvent{Name: name, Headers: make(map[string]string, len(hdr)), Body: body, Known: known}
	keys := make([]string, 0, len(hdr))
	for k, v := range hdr {
		ev.Headers[k] = v
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s.mu.Lock()
	s.sent = append(s.sent, ev)
	if known {
		h := s.stdHeadersLocked(strings.ToUpper(name))
		h = append(h, Header{"Command", "sendevent " + name}, Header{"Event-UUID", id})
		for _, k := range keys {
			h = append(h, Header{k, hdr[k]})
		}
		s.deliverLocked(strings.ToUpper(name), h, body)
	}
	s.mu.Unlock()
	return "+OK " + id
}

package fakefs

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// ErrNoChannel is returned by the channel helpers for an unknown UUID.
var ErrNoChannel = errors.New("fakefs: no such channel")

// Channel is a live fake channel. Channels returns copies.
type Channel struct {
	UUID        string
	Name        string
	Direction   string // "inbound" or "outbound"
	State       string // CS_*
	CallState   string // DOWN, RINGING, ACTIVE, HELD, HANGUP
	AnswerState string // ringing, early, answered, hangup
	CIDName     string
	CIDNum      string
	Dest        string
	Context     string
	Dialplan    string
	App         string // application being run (e.g. "bridge", "park")
	AppData     string
	Peer        string // Unique-ID of the bridged (or originating) leg
	Held        bool
	Recordings  []string // file paths being recorded
	HangupCause string
	// Vars are the channel variables in the order they were set
	// (originate {} then [] variables first).
	Vars     []Header
	Created  time.Time
	Answered time.Time

	order      uint64
	source     string
	originator bool   // true on the leg that dialled Peer (A side)
	loopPeer   string // the other half of a loopback pair: they end together
	progressed time.Time
	bridged    time.Time
	transfered time.Time
	hungUp     time.Time
	limits     []limitHold // mod_hash resources this channel counts in
}

// Var returns the channel variable name ("" when unset).
func (c *Channel) Var(name string) string {
	for _, h := range c.Vars {
		if h.Name == name {
			return h.Value
		}
	}
	return ""
}

func (c *Channel) setVar(name, value string) {
	for i, h := range c.Vars {
		if h.Name == name {
			c.Vars[i].Value = value
			return
		}
	}
	c.Vars = append(c.Vars, Header{name, value})
}

func (c *Channel) clone() Channel {
	cp := *c
	cp.Vars = slices.Clone(c.Vars)
	cp.Recordings = slices.Clone(c.Recordings)
	cp.limits = slices.Clone(c.limits)
	return cp
}

// ChannelSpec describes a channel created by CreateChannel, for example an
// inbound call that did not come from an originate.
type ChannelSpec struct {
	UUID      string // default: random
	Direction string // default "inbound"
	Name      string // default "sofia/internal/<CIDNum>@<Hostname>"
	CIDName   string
	CIDNum    string
	Dest      string
	Context   string // default "default"
	Vars      []Header
	// Answer also emits CHANNEL_PROGRESS and CHANNEL_ANSWER.
	Answer bool
	// Enter, with Answer, is where the public dialplan sends an inbound DID
	// call: the channel is created in Context ("public") without these
	// variables, and CHANNEL_ANSWER is the first event that carries
	// Enter's context, destination and variables (sb_tenant, ...), as on a
	// real FreeSWITCH.
	Enter *Entry
}

// Entry is the context, destination and variables a call has after the
// public dialplan transferred it into a tenant.
type Entry struct {
	Context string
	Dest    string
	Vars    []Header
}

// DIDCall describes an inbound carrier call to did that the public
// dialplan hands to tenant's extension ext.
func DIDCall(callerNum, did, tenant, ext string) ChannelSpec {
	return ChannelSpec{
		Name:    "sofia/external/" + callerNum + "@198.51.100.7",
		CIDName: callerNum, CIDNum: callerNum, Dest: did, Context: "public", Answer: true,
		Enter: &Entry{Context: tenant, Dest: ext, Vars: []Header{{"sb_tenant", tenant}, {"sb_did", did}}},
	}
}

// Channels returns copies of the live channels in creation order.
func (s *Server) Channels() []Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.channelsLocked()
}

func (s *Server) channelsLocked() []Channel {
	out := make([]Channel, 0, len(s.channels))
	for _, c := range s.channels {
		out = append(out, c.clone())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].order < out[j].order })
	return out
}

// Channel returns a copy of the live channel with this UUID.
func (s *Server) Channel(id string) (Channel, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[id]
	if !ok {
		return Channel{}, false
	}
	return c.clone(), true
}

// CreateChannel adds a channel and emits CHANNEL_CREATE (and, with
// spec.Answer, CHANNEL_PROGRESS and CHANNEL_ANSWER). It returns the UUID.
func (s *Server) CreateChannel(spec ChannelSpec) (string, error) {
	if spec.UUID == "" {
		spec.UUID = uuid.NewString()
	}
	if spec.Direction == "" {
		spec.Direction = "inbound"
	}
	if spec.Context == "" {
		spec.Context = "default"
	}
	if spec.Name == "" {
		spec.Name = "sofia/internal/" + spec.CIDNum + "@" + s.opts.Hostname
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.channels[spec.UUID]; dup {
		return "", fmt.Errorf("fakefs create channel %s: uuid in use", spec.UUID)
	}
	c := s.newChannelLocked(spec.UUID, spec.Name, spec.Direction, "mod_sofia")
	c.CIDName, c.CIDNum, c.Dest, c.Context = spec.CIDName, spec.CIDNum, spec.Dest, spec.Context
	for _, v := range spec.Vars {
		c.setVar(v.Name, v.Value)
	}
	s.emitChannelLocked("CHANNEL_CREATE", c, nil, nil)
	if spec.Answer {
		s.progressLocked(c)
		if e := spec.Enter; e != nil {
			c.Context = firstNonEmpty(e.Context, c.Context)
			c.Dest = firstNonEmpty(e.Dest, c.Dest)
			for _, v := range e.Vars {
				c.setVar(v.Name, v.Value)
			}
		}
		s.answerLocked(c)
	}
	return c.UUID, nil
}

func (s *Server) newChannelLocked(id, name, direction, source string) *Channel {
	s.chanSeq++
	s.sessions++
	c := &Channel{
		UUID: id, Name: name, Direction: direction,
		State: "CS_INIT", CallState: "DOWN", AnswerState: "ringing",
		Dialplan: "XML", Context: "default",
		Created: time.Now(), order: s.chanSeq, source: source,
	}
	s.channels[id] = c
	return c
}

// Answer marks a channel answered and emits CHANNEL_ANSWER.
func (s *Server) Answer(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[id]
	if !ok {
		return fmt.Errorf("fakefs answer %s: %w", id, ErrNoChannel)
	}
	s.answerLocked(c)
	return nil
}

func (s *Server) progressLocked(c *Channel) {
	c.CallState = "RINGING"
	if c.Direction == "inbound" {
		c.State = "CS_ROUTING"
	} else {
		c.State = "CS_CONSUME_MEDIA"
	}
	c.progressed = time.Now()
	s.emitChannelLocked("CHANNEL_PROGRESS", c, nil, nil)
}

func (s *Server) answerLocked(c *Channel) {
	c.State, c.CallState, c.AnswerState = "CS_EXECUTE", "ACTIVE", "answered"
	c.Answered = time.Now()
	s.emitChannelLocked("CHANNEL_ANSWER", c, nil, nil)
}

// Bridge bridges two live channels (a is the originating side) and emits
// CHANNEL_BRIDGE on a.
func (s *Server) Bridge(a, b string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	ca, okA := s.channels[a]
	cb, okB := s.channels[b]
	if !okA || !okB {
		return fmt.Errorf("fakefs bridge %s %s: %w", a, b, ErrNoChannel)
	}
	s.bridgeLocked(ca, cb)
	return nil
}

func (s *Server) bridgeLocked(a, b *Channel) {
	now := time.Now()
	a.Peer, b.Peer = b.UUID, a.UUID
	a.originator, b.originator = true, false
	a.bridged, b.bridged = now, now
	b.State = "CS_EXCHANGE_MEDIA"
	b.setVar("bridge_uuid", a.UUID)
	a.setVar("bridge_uuid", b.UUID)
	s.emitChannelLocked("CHANNEL_BRIDGE", a,
		[]Header{{"Bridge-A-Unique-ID", a.UUID}, {"Bridge-B-Unique-ID", b.UUID}}, nil)
}

func (s *Server) unbridgeLocked(a *Channel) {
	b, ok := s.channels[a.Peer]
	if !ok {
		return
	}
	if !a.originator {
		a, b = b, a
	}
	s.emitChannelLocked("CHANNEL_UNBRIDGE", a,
		[]Header{{"Bridge-A-Unique-ID", a.UUID}, {"Bridge-B-Unique-ID", b.UUID}}, nil)
}

// Hold puts a channel on hold (or takes it off) and emits CHANNEL_HOLD or
// CHANNEL_UNHOLD.
func (s *Server) Hold(id string, on bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[id]
	if !ok {
		return fmt.Errorf("fakefs hold %s: %w", id, ErrNoChannel)
	}
	s.holdLocked(c, on)
	return nil
}

func (s *Server) holdLocked(c *Channel, on bool) {
	c.Held = on
	if on {
		c.CallState = "HELD"
		s.emitChannelLocked("CHANNEL_HOLD", c, nil, nil)
		return
	}
	c.CallState = "ACTIVE"
	s.emitChannelLocked("CHANNEL_UNHOLD", c, nil, nil)
}

// Hangup hangs a channel up with cause (default NORMAL_CLEARING), and its
// bridged peer with it, emitting CHANNEL_UNBRIDGE, CHANNEL_HANGUP,
// CHANNEL_HANGUP_COMPLETE and CHANNEL_DESTROY, as uuid_kill does.
func (s *Server) Hangup(id, cause string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.channels[id]
	if !ok {
		return fmt.Errorf("fakefs hangup %s: %w", id, ErrNoChannel)
	}
	s.hangupLocked(c, cause)
	return nil
}

func (s *Server) hangupLocked(c *Channel, cause string) {
	if cause == "" {
		cause = "NORMAL_CLEARING"
	}
	legs := []*Channel{c}
	if p, ok := s.channels[c.Peer]; ok && c.Peer != "" {
		if !c.bridged.IsZero() {
			s.unbridgeLocked(c)
		}
		legs = append(legs, p)
	}
	now := time.Now()
	for _, l := range legs {
		l.State, l.CallState, l.AnswerState, l.HangupCause = "CS_HANGUP", "HANGUP", "hangup", cause
		l.hungUp = now
		setHangupVars(l, cause, now)
		s.emitChannelLocked("CHANNEL_HANGUP", l, nil, nil)
	}
	for _, l := range legs {
		l.State = "CS_REPORTING"
		s.emitChannelLocked("CHANNEL_HANGUP_COMPLETE", l, nil, nil)
	}
	for _, l := range legs {
		s.releaseLimitsLocked(l)
		l.State = "CS_DESTROY"
		s.emitChannelLocked("CHANNEL_DESTROY", l, nil, nil)
		delete(s.channels, l.UUID)
	}
	for _, l := range legs {
		if p, ok := s.channels[l.loopPeer]; ok && l.loopPeer != "" {
			s.hangupLocked(p, cause)
		}
	}
}

// q850 maps the common hangup causes to their Q.850 codes.
var q850 = map[string]int{
	"UNALLOCATED_NUMBER": 1, "NORMAL_CLEARING": 16, "USER_BUSY": 17, "NO_USER_RESPONSE": 18,
	"NO_ANSWER": 19, "SUBSCRIBER_ABSENT": 20, "CALL_REJECTED": 21, "DESTINATION_OUT_OF_ORDER": 27,
	"NORMAL_TEMPORARY_FAILURE": 41, "ORIGINATOR_CANCEL": 487, "MANAGER_REQUEST": 503,
}

func setHangupVars(c *Channel, cause string, end time.Time) {
	c.setVar("hangup_cause", cause)
	if code, ok := q850[cause]; ok {
		c.setVar("hangup_cause_q850", strconv.Itoa(code))
	}
	stamp := func(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") }
	c.setVar("start_stamp", stamp(c.Created))
	c.setVar("end_stamp", stamp(end))
	c.setVar("start_epoch", strconv.FormatInt(c.Created.Unix(), 10))
	c.setVar("start_uepoch", strconv.FormatInt(c.Created.UnixMicro(), 10))
	c.setVar("answer_epoch", strconv.FormatInt(epoch(c.Answered), 10))
	c.setVar("answer_uepoch", strconv.FormatInt(uepoch(c.Answered), 10))
	c.setVar("end_epoch", strconv.FormatInt(end.Unix(), 10))
	c.setVar("end_uepoch", strconv.FormatInt(end.UnixMicro(), 10))
	c.setVar("duration", strconv.Itoa(int(end.Sub(c.Created).Seconds())))
	billsec := 0
	if !c.Answered.IsZero() {
		billsec = int(end.Sub(c.Answered).Seconds())
	}
	c.setVar("billsec", strconv.Itoa(billsec))
}

func epoch(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

func uepoch(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

package calls

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard/switchboard/internal/freeswitch/esl"
)

// Event kinds understood by the apply script.
const (
	kindCreate      = "create"
	kindProgress    = "progress"
	kindMedia       = "media"
	kindAnswer      = "answer"
	kindBridge      = "bridge"
	kindUnbridge    = "unbridge"
	kindHold        = "hold"
	kindUnhold      = "unhold"
	kindRecordStart = "record_start"
	kindRecordStop  = "record_stop"
	kindHangup      = "hangup"
	kindResync      = "resync"
	kindResyncEnd   = "resync_end"
)

var eventKinds = map[string]string{
	"CHANNEL_CREATE":          kindCreate,
	"CHANNEL_PROGRESS":        kindProgress,
	"CHANNEL_PROGRESS_MEDIA":  kindMedia,
	"CHANNEL_ANSWER":          kindAnswer,
	"CHANNEL_BRIDGE":          kindBridge,
	"CHANNEL_UNBRIDGE":        kindUnbridge,
	"CHANNEL_HOLD":            kindHold,
	"CHANNEL_UNHOLD":          kindUnhold,
	"CHANNEL_HANGUP_COMPLETE": kindHangup,
	"RECORD_START":            kindRecordStart,
	"RECORD_STOP":             kindRecordStop,
}

// guardFactor: the CDR guard lives this many times Options.EndedTTL.
const guardFactor = 6

// Lifecycle ranks: the lifecycle only moves to a higher rank.
const (
	rankRinging  = 1
	rankEarly    = 2
	rankAnswered = 3
	rankHangup   = 9
)

// patch is what the apply script merges into a channel record; the Go side
// does all header parsing so the script stays a small merge.
type patch struct {
	Prefix  string `json:"prefix"`
	Kind    string `json:"kind"`
	Node    string `json:"node"`
	UUID    string `json:"uuid"`
	Seq     uint64 `json:"seq"`
	Now     string `json:"now"`
	NowUnix int64  `json:"now_unix"`
	TTL     int64  `json:"ttl"`
	// GuardTTL keeps the CDR guard, which also stops late events from
	// reviving a channel, after the tombstone expired.
	GuardTTL int64 `json:"guard_ttl"`
	// QueueCDR tells the script to queue a CDR envelope when the channel ends.
	QueueCDR bool `json:"queue_cdr"`
	// QueueEvents tells the script to queue call.started and call.answered.
	QueueEvents bool `json:"queue_events"`

	Tech      string `json:"tech"`
	Name      string `json:"name"`
	Tenant    string `json:"tenant"`
	Direction string `json:"direction"`
	Extension string `json:"extension"`
	Context   string `json:"context"`
	CallUUID  string `json:"call_uuid"`

	CallerIDName   string `json:"caller_id_name"`
	CallerIDNumber string `json:"caller_id_number"`
	Destination    string `json:"destination"`

	StartedAt string `json:"started_at"`
	StartedUs string `json:"started_us"`
	// Score is the start time in unix seconds, the live sets' score.
	Score      string `json:"score"`
	AnsweredAt string `json:"answered_at"`
	BridgedAt  string `json:"bridged_at"`

	Rank       int    `json:"rank"`
	Held       bool   `json:"held"`
	Peer       string `json:"peer"`
	RecordPath string `json:"record_path"`

	HangupCause string `json:"hangup_cause"`
	EndedAt     string `json:"ended_at"`
	Duration    int    `json:"duration"`
	Billsec     int    `json:"billsec"`
	// CutoffUs: resync_end only ends channels started at or before it.
	CutoffUs string `json:"cutoff_us"`
	// Core is the Core-UUID of the FreeSWITCH process the event came from.
	// A channel remembers it; resync_end with Core set ends the channels
	// of any other process whatever their age, and never one of this one
	// started after CutoffUs.
	Core string `json:"core"`
}

// patchFields names the patch fields in the order args sends them; the apply
// script reads them as p.<name> (see scriptSource).
var patchFields = []string{
	"prefix", "kind", "node", "uuid", "seq", "now", "now_unix", "ttl", "guard_ttl", "queue_cdr", "queue_events",
	"tech", "name", "tenant", "direction", "extension", "context", "call_uuid",
	"caller_id_name", "caller_id_number", "destination",
	"started_at", "started_us", "score", "answered_at", "bridged_at",
	"rank", "held", "peer", "record_path",
	"hangup_cause", "ended_at", "duration", "billsec", "cutoff_us", "core",
}

// args returns the patch as the apply script's ARGV, in patchFields order.
func (p patch) args() []any {
	return []any{
		p.Prefix, p.Kind, p.Node, p.UUID, p.Seq, p.Now, p.NowUnix, p.TTL, p.GuardTTL, flag(p.QueueCDR), flag(p.QueueEvents),
		p.Tech, p.Name, p.Tenant, p.Direction, p.Extension, p.Context, p.CallUUID,
		p.CallerIDName, p.CallerIDNumber, p.Destination,
		p.StartedAt, p.StartedUs, p.Score, p.AnsweredAt, p.BridgedAt,
		p.Rank, flag(p.Held), p.Peer, p.RecordPath,
		p.HangupCause, p.EndedAt, p.Duration, p.Billsec, p.CutoffUs, p.Core,
	}
}

// keys returns the keys the apply script reads and writes for p, as its
// KEYS (the order is documented at the top of apply.lua). They all start
// with p.Prefix, whose hash tag puts them in one Redis Cluster slot.
func (p patch) keys() []string {
	m, peer := member(p.Node, p.UUID), member(p.Node, p.Peer)
	return []string{
		p.Prefix + "ch:" + m,
		p.Prefix + "cdr:once:" + m,
		p.Prefix + "chres:" + m,
		p.Prefix + "chseq:" + p.Tenant,
		p.Prefix + "live",
		p.Prefix + "live:" + p.Tenant,
		p.Prefix + "live:node:" + p.Node,
		p.Prefix + "cdr:pending",
		p.Prefix + "stream",
		p.Prefix + "ch:" + peer,
		p.Prefix + "cdr:once:" + peer,
	}
}

// scriptSource is the apply script preceded by the line that names its
// ARGV: local p = {prefix = ARGV[1], kind = ARGV[2], ...}.
func scriptSource() string {
	var b strings.Builder
	b.WriteString("local p = {")
	for i, f := range patchFields {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s = ARGV[%d]", f, i+1)
	}
	b.WriteString("}\n")
	b.WriteString(applySource)
	return b.String()
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// patchFromEvent turns a channel event into a patch. It returns ok=false for
// events the tracker does not follow.
func (t *Tracker) patchFromEvent(e esl.Event, now time.Time) (p patch, ok bool, err error) {
	kind, ok := eventKinds[e.Name()]
	if !ok {
		return patch{}, false, nil
	}
	p = t.basePatch(kind, now)
	p.UUID = e.Get("Unique-ID")
	p.Node = e.Node
	if p.Node == "" {
		p.Node = e.Get("FreeSWITCH-Switchname")
	}
	if p.UUID == "" || p.Node == "" {
		return patch{}, false, fmt.Errorf("apply %s: missing Unique-ID or node", e.Name())
	}
	p.Seq = e.Sequence()
	p.Core = e.Get("Core-UUID")
	evTime := microTime(e.Get("Event-Date-Timestamp"), now)

	p.Tech = technology(e.Get("Channel-Name"))
	p.Direction = e.Get("Call-Direction")
	p.Extension = cleanName(e.Var("sb_ext"))
	p.Context = e.Get("Caller-Context")
	p.CallUUID = e.Get("Channel-Call-UUID")
	p.CallerIDName = e.Get("Caller-Caller-ID-Name")
	p.CallerIDNumber = e.Get("Caller-Caller-ID-Number")
	p.Destination = e.Get("Caller-Destination-Number")
	presExt, presTenant := presenceUser(e.Var("presence_id"))
	p.Tenant = t.tenantOf(e.Var("sb_tenant"), e.Var("user_context"), p.Context, presTenant)
	if p.Extension == "" && presTenant != "" && presTenant == p.Tenant {
		p.Extension = presExt
	}
	external := p.CallerIDNumber
	if p.Direction == "outbound" {
		external = p.Destination
	}
	p.Name = firstName(p.Extension, external, channelUser(e.Get("Channel-Name")))

	started := microTime(e.Get("Caller-Channel-Created-Time"), evTime)
	p.setStarted(started)
	if at, ok := microStamp(e.Get("Caller-Channel-Answered-Time")); ok {
		p.AnsweredAt = at
	}
	if at, ok := microStamp(e.Get("Caller-Channel-Bridged-Time")); ok {
		p.BridgedAt = at
	}
	p.Rank = max(kindRank(kind), answerRank(e.Get("Answer-State")))

	switch kind {
	case kindAnswer:
		if p.AnsweredAt == "" {
			p.AnsweredAt = stamp(evTime)
		}
	case kindBridge, kindUnbridge:
		p.Peer = peerOf(e, p.UUID)
		if kind == kindBridge && p.BridgedAt == "" {
			p.BridgedAt = stamp(evTime)
		}
	case kindRecordStart, kindRecordStop:
		p.RecordPath = e.Get("Record-File-Path")
	case kindHangup:
		p.HangupCause = e.Get("Hangup-Cause")
		if p.HangupCause == "" {
			p.HangupCause = e.Var("hangup_cause")
		}
		p.EndedAt = stamp(microTime(e.Get("Caller-Channel-Hangup-Time"), evTime))
		p.Duration = intOr(e.Var("duration"), -1)
		p.Billsec = intOr(e.Var("billsec"), -1)
	}
	return p, true, nil
}

// basePatch fills the fields every patch carries.
func (t *Tracker) basePatch(kind string, now time.Time) patch {
	return patch{
		Prefix:   t.prefix,
		Kind:     kind,
		Now:      stamp(now),
		NowUnix:  now.Unix(),
		TTL:      int64(t.opts.EndedTTL / time.Second),
		GuardTTL: int64(guardFactor * t.opts.EndedTTL / time.Second),
		QueueCDR: t.opts.OnEnd != nil,
		// call.started and call.answered
		QueueEvents: t.opts.OnCallEvent != nil,
		Duration:    -1,
		Billsec:     -1,
	}
}

// tenantOf picks the channel's tenant: sb_tenant when it is a valid tenant
// name, else user_context or the caller context when they name a tenant.
func (t *Tracker) tenantOf(sbTenant string, contexts ...string) string {
	if tenantRe.MatchString(sbTenant) {
		return sbTenant
	}
	for _, c := range contexts {
		if t.isTenant(c) {
			return c
		}
	}
	return ""
}

// isTenant reports whether a dialplan context names a tenant.
func (t *Tracker) isTenant(name string) bool {
	if !tenantRe.MatchString(name) || reservedContexts[name] {
		return false
	}
	return t.opts.TenantExists == nil || t.opts.TenantExists(name)
}

// presenceUser splits a presence id "<extension>-<tenant>@<domain>" (a
// directory user's id is <extension>-<tenant>, see design.md).
func presenceUser(presenceID string) (ext, tenant string) {
	user, _, _ := strings.Cut(presenceID, "@")
	ext, tenant, ok := strings.Cut(user, "-")
	if !ok {
		return "", ""
	}
	return cleanName(ext), tenant
}

// peerOf returns the other leg of a bridge event.
func peerOf(e esl.Event, self string) string {
	a, b := e.Get("Bridge-A-Unique-ID"), e.Get("Bridge-B-Unique-ID")
	switch {
	case a == self && b != "":
		return b
	case b == self && a != "":
		return a
	case a != "" && b != "" && a != self:
		return a
	}
	return e.Get("Other-Leg-Unique-ID")
}

func kindRank(kind string) int {
	switch kind {
	case kindCreate, kindProgress:
		return rankRinging
	case kindMedia:
		return rankEarly
	case kindAnswer:
		return rankAnswered
	case kindHangup:
		return rankHangup
	}
	return 0
}

// answerRank maps the Answer-State header, which every channel event carries,
// so that for example a BRIDGE seen before its ANSWER still marks the channel
// answered.
func answerRank(s string) int {
	switch s {
	case "ringing":
		return rankRinging
	case "early":
		return rankEarly
	case "answered":
		return rankAnswered
	}
	return 0
}

// stamp formats a time the way records store it.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// microTime parses a FreeSWITCH microsecond timestamp, with a fallback for
// absent or zero values.
func microTime(s string, fallback time.Time) time.Time {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 {
		return fallback
	}
	return time.UnixMicro(n)
}

// microStamp formats a non-zero microsecond timestamp.
func microStamp(s string) (string, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 {
		return "", false
	}
	return stamp(time.UnixMicro(n)), true
}

func intOr(s string, def int) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return def
	}
	return n
}

// setStarted fills the start time fields from one instant.
func (p *patch) setStarted(t time.Time) {
	us := t.UnixMicro()
	p.StartedAt = stamp(t)
	p.StartedUs = strconv.FormatInt(us, 10)
	p.Score = fmt.Sprintf("%d.%06d", us/1e6, us%1e6)
}

package calls

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/freeswitch/esl"
	"github.com/switchboard/switchboard/internal/platform/redistest"
)

// backend is one Redis the tests run against.
type backend struct {
	name   string
	url    string // what redistest.Open takes to open another client
	rdb    redis.UniversalClient
	prefix string
	mini   *miniredis.Miniredis // nil for a real Redis
}

// backends returns miniredis always, plus the real Redis named by
// SWITCHBOARD_TEST_REDIS_URL when set (one server, Sentinel or Cluster;
// under a unique key prefix that is deleted at the end).
func backends(t *testing.T) []backend {
	t.Helper()
	m := miniredis.RunT(t)
	// Long timeouts: under -race the in-process Redis runs Lua many times
	// slower, and a pipelined batch may take seconds on a busy machine.
	mini := redis.NewClient(&redis.Options{Addr: m.Addr(), ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second})
	t.Cleanup(func() { mini.Close() })
	out := []backend{{name: "miniredis", url: "redis://" + m.Addr(), rdb: mini, prefix: "sb:{calls}:", mini: m}}
	if rdb := redistest.FromEnv(t); rdb != nil {
		out = append(out, backend{name: "redis", url: os.Getenv(redistest.EnvURL), rdb: rdb, prefix: testPrefix(t, rdb)})
	}
	return out
}

// testPrefix returns a fresh key prefix and deletes its keys at the end.
// The prefix is its own hash tag, as the tracker's keys need on a cluster.
func testPrefix(tb testing.TB, rdb redis.UniversalClient) string {
	tb.Helper()
	prefix := "sbtest:{" + uuid.NewString()[:8] + "}:"
	tb.Cleanup(func() {
		if err := redistest.DeleteMatching(context.Background(), rdb, prefix+"*"); err != nil {
			tb.Logf("clean up %s*: %v", prefix, err)
		}
	})
	return prefix
}

// forEachBackend runs f as a subtest per backend.
func forEachBackend(t *testing.T, f func(t *testing.T, b backend)) {
	t.Helper()
	for _, b := range backends(t) {
		t.Run(b.name, func(t *testing.T) { f(t, b) })
	}
}

// cdrSink collects CDRs handed to OnEnd; fail makes OnEnd fail while set.
type cdrSink struct {
	mu   sync.Mutex
	cdrs []CDR
	fail atomic.Bool
}

func (s *cdrSink) onEnd(_ context.Context, c CDR) error {
	if s.fail.Load() {
		return fmt.Errorf("cdr store down")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cdrs = append(s.cdrs, c)
	return nil
}

func (s *cdrSink) all() []CDR {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]CDR(nil), s.cdrs...)
}

// fixedNow is the test clock: one hour after the fixtures' calls start.
var fixedNow = time.UnixMicro(baseMicro).Add(time.Hour)

// baseMicro is the fixtures' first Event-Date-Timestamp (from esl-session.txt).
const baseMicro int64 = 1795370071144783

func newTracker(t testing.TB, b backend, sink *cdrSink) *Tracker {
	t.Helper()
	opts := Options{Prefix: b.prefix, Now: func() time.Time { return fixedNow }}
	if sink != nil {
		opts.OnEnd = sink.onEnd
	}
	return NewTracker(b.rdb, opts)
}

// leg describes one channel of a fixture call.
type leg struct {
	node, uuid, name, direction string
	cidName, cidNum, dest       string
	tenant, ext, context        string
	created                     int64 // microseconds
}

// ev builds a channel event the way FreeSWITCH sends it (values already
// URL-decoded, as esl delivers them). extra are header name/value pairs.
func (l leg) ev(name string, seq uint64, extra ...string) esl.Event {
	ts := l.created + int64(seq)*1000
	answer := map[string]string{
		"CHANNEL_CREATE": "ringing", "CHANNEL_PROGRESS": "ringing",
		"CHANNEL_PROGRESS_MEDIA": "early", "CHANNEL_HANGUP_COMPLETE": "hangup",
	}[name]
	if answer == "" {
		answer = "answered"
	}
	h := map[string]string{
		"Event-Name":                   name,
		"Core-UUID":                    "7b9b2455-b94f-44b5-954f-36eb996f438b",
		"FreeSWITCH-Hostname":          l.node,
		"FreeSWITCH-Switchname":        l.node,
		"Event-Date-Timestamp":         strconv.FormatInt(ts, 10),
		"Event-Sequence":               strconv.FormatUint(seq, 10),
		"Channel-Name":                 l.name,
		"Unique-ID":                    l.uuid,
		"Call-Direction":               l.direction,
		"Channel-Call-UUID":            l.uuid,
		"Answer-State":                 answer,
		"Caller-Caller-ID-Name":        l.cidName,
		"Caller-Caller-ID-Number":      l.cidNum,
		"Caller-Destination-Number":    l.dest,
		"Caller-Context":               l.context,
		"Caller-Channel-Created-Time":  strconv.FormatInt(l.created, 10),
		"Caller-Channel-Answered-Time": "0",
		"Caller-Channel-Hangup-Time":   "0",
		"variable_uuid":                l.uuid,
		"variable_channel_name":        l.name,
	}
	if l.tenant != "" {
		h["variable_sb_tenant"] = l.tenant
	}
	if l.ext != "" {
		h["variable_sb_ext"] = l.ext
	}
	for i := 0; i+1 < len(extra); i += 2 {
		h[extra[i]] = extra[i+1]
	}
	return esl.NewEvent(l.node, h, "")
}

// callback is the fixture call of freeswitch.md 6.1: A (the user's mobile,
// via a gateway) is dialled, answers, then B is dialled and bridged to A.
type callback struct {
	a, b leg
}

func newCallback(node, tenant string, n int) callback {
	created := baseMicro + int64(n)*1_000_000
	return callback{
		a: leg{node: node, uuid: fmt.Sprintf("a%07d-8b1d-4c7e-9f3a-2b6d1e0a9c47", n), name: "sofia/external/447700900123",
			direction: "outbound", cidName: "ACME", cidNum: "+442071234567", dest: "447700900123",
			tenant: tenant, ext: "1001", context: "default", created: created},
		b: leg{node: node, uuid: fmt.Sprintf("b%07d-2e4f-4a1b-8c3d-5e6f7a8b9c0d", n), name: "sofia/external/442079876543",
			direction: "outbound", cidName: "ACME", cidNum: "447700900123", dest: "442079876543",
			tenant: tenant, context: "default", created: created + 3000},
	}
}

// step is one event of a lifecycle plus the live states expected after it
// (uuid -> state) when applied in order.
type step struct {
	e    esl.Event
	live map[string]string
}

// lifecycle returns the callback call's events starting at Event-Sequence
// base, with the expected live states after each in-order step.
func (c callback) lifecycle(base uint64, hangup bool) []step {
	a, b := c.a, c.b
	ansA := strconv.FormatInt(a.created+3000, 10)
	ansB := strconv.FormatInt(b.created+6000, 10)
	bridge := []string{"Bridge-A-Unique-ID", a.uuid, "Bridge-B-Unique-ID", b.uuid, "Other-Leg-Unique-ID", b.uuid}
	withA := func(kv ...string) []string { return append([]string{"Caller-Channel-Answered-Time", ansA}, kv...) }
	withB := func(kv ...string) []string { return append([]string{"Caller-Channel-Answered-Time", ansB}, kv...) }
	s := func(e esl.Event, live ...string) step {
		m := map[string]string{}
		for i := 0; i+1 < len(live); i += 2 {
			m[live[i]] = live[i+1]
		}
		return step{e, m}
	}
	steps := []step{
		s(a.ev("CHANNEL_CREATE", base+1), a.uuid, "ringing"),
		s(a.ev("CHANNEL_PROGRESS", base+2), a.uuid, "ringing"),
		s(a.ev("CHANNEL_ANSWER", base+3, withA()...), a.uuid, "answered"),
		s(b.ev("CHANNEL_CREATE", base+4, "Other-Leg-Unique-ID", a.uuid), a.uuid, "answered", b.uuid, "ringing"),
		s(b.ev("CHANNEL_PROGRESS_MEDIA", base+5), a.uuid, "answered", b.uuid, "early"),
		s(b.ev("CHANNEL_ANSWER", base+6, withB()...), a.uuid, "answered", b.uuid, "answered"),
		s(a.ev("CHANNEL_BRIDGE", base+7, withA(bridge...)...), a.uuid, "bridged", b.uuid, "bridged"),
		s(a.ev("RECORD_START", base+8, withA("Record-File-Path", "/var/lib/sb/rec/acme/call.wav")...), a.uuid, "bridged", b.uuid, "bridged"),
		s(b.ev("CHANNEL_HOLD", base+9, withB()...), a.uuid, "bridged", b.uuid, "held"),
		s(b.ev("CHANNEL_UNHOLD", base+10, withB()...), a.uuid, "bridged", b.uuid, "bridged"),
		s(a.ev("RECORD_STOP", base+11, withA("Record-File-Path", "/var/lib/sb/rec/acme/call.wav")...), a.uuid, "bridged", b.uuid, "bridged"),
	}
	if !hangup {
		return steps
	}
	hup := func(l leg, seq uint64, ans string) esl.Event {
		return l.ev("CHANNEL_HANGUP_COMPLETE", seq, "Caller-Channel-Answered-Time", ans,
			"Hangup-Cause", "NORMAL_CLEARING", "Caller-Channel-Hangup-Time", strconv.FormatInt(l.created+60_000_000, 10),
			"variable_duration", "60", "variable_billsec", "57")
	}
	return append(steps,
		s(a.ev("CHANNEL_UNBRIDGE", base+12, withA(bridge...)...), a.uuid, "answered", b.uuid, "answered"),
		s(hup(b, base+13, ansB), a.uuid, "answered"),
		s(hup(a, base+14, ansA)),
	)
}

func events(steps []step) []esl.Event {
	out := make([]esl.Event, len(steps))
	for i, s := range steps {
		out[i] = s.e
	}
	return out
}

// liveStates lists the live channels of a tenant as uuid -> state.
func liveStates(t *testing.T, tr *Tracker, tenant string) map[string]string {
	t.Helper()
	chs, total, err := tr.List(t.Context(), tenant, 0, 0)
	if err != nil {
		t.Fatalf("List(%q): %v", tenant, err)
	}
	if total != len(chs) {
		t.Fatalf("List(%q): total %d but %d channels", tenant, total, len(chs))
	}
	out := map[string]string{}
	for _, c := range chs {
		out[c.UUID] = c.State
	}
	return out
}

// snapshot returns every key under prefix with its value (TTL ignored).
func snapshot(t *testing.T, rdb redis.UniversalClient, prefix string) map[string]string {
	t.Helper()
	ctx := t.Context()
	keys, err := redistest.Keys(ctx, rdb, prefix+"*")
	if err != nil {
		t.Fatalf("keys: %v", err)
	}
	out := map[string]string{}
	for _, k := range keys {
		typ := rdb.Type(ctx, k).Val()
		var v string
		switch typ {
		case "string":
			v = rdb.Get(ctx, k).Val()
		case "zset":
			zs := rdb.ZRangeWithScores(ctx, k, 0, -1).Val()
			v = fmt.Sprint(zs)
		case "set":
			ms := rdb.SMembers(ctx, k).Val()
			sort.Strings(ms)
			v = strings.Join(ms, ",")
		case "list":
			v = strings.Join(rdb.LRange(ctx, k, 0, -1).Val(), "\n")
		}
		out[k] = typ + ":" + v
	}
	return out
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

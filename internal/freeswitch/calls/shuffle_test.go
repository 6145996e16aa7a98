package calls

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"

	"github.com/switchboard/switchboard/internal/freeswitch/esl"
)

// endState is the order-independent outcome of a lifecycle: both channels
// (with the id sequence numbers blanked, since they depend on which leg is
// seen first), the live set and the CDRs.
type endState struct {
	Channels map[string]Channel
	Live     map[string]string
	CDRs     []CDR
}

func stripSeq(t *testing.T, id string) string {
	t.Helper()
	if id == "" {
		return ""
	}
	tech, name, tenant, _, err := ParseID(id)
	if err != nil {
		t.Fatalf("stored id: %v", err)
	}
	return tech + "/" + name + "-" + tenant + "-?"
}

func collect(t *testing.T, tr *Tracker, sink *cdrSink, call callback) endState {
	t.Helper()
	st := endState{Channels: map[string]Channel{}, Live: liveStates(t, tr, "")}
	ids := map[string]string{}
	for _, l := range []leg{call.a, call.b} {
		ch, err := tr.ByUUID(t.Context(), l.node, l.uuid)
		if err != nil {
			t.Fatalf("ByUUID %s: %v", l.uuid, err)
		}
		ids[l.uuid] = ch.ID
		st.Channels[l.uuid] = ch
	}
	for u, ch := range st.Channels {
		if ch.BridgedTo != "" && ch.BridgedTo != ids[ch.PeerUUID] {
			t.Fatalf("%s bridged_to %q, peer id %q", u, ch.BridgedTo, ids[ch.PeerUUID])
		}
		ch.ID, ch.BridgedTo = stripSeq(t, ch.ID), stripSeq(t, ch.BridgedTo)
		st.Channels[u] = ch
	}
	for _, c := range sink.all() {
		c.ChannelID = stripSeq(t, c.ChannelID)
		st.CDRs = append(st.CDRs, c)
	}
	sort.Slice(st.CDRs, func(i, j int) bool { return st.CDRs[i].UUID < st.CDRs[j].UUID })
	return st
}

// afterHangup keeps what is guaranteed once both legs have ended: events
// that arrive after a channel's HANGUP_COMPLETE are ignored, so the tombstone
// records and a CDR's recording path hold only what was known at hangup.
func afterHangup(st endState) endState {
	out := endState{Channels: map[string]Channel{}, Live: st.Live}
	for u, ch := range st.Channels {
		out.Channels[u] = Channel{ID: ch.ID, UUID: ch.UUID, Tenant: ch.Tenant, State: ch.State}
	}
	for _, c := range st.CDRs {
		c.RecordingPath = ""
		out.CDRs = append(out.CDRs, c)
	}
	return out
}

// TestShuffledOrderSameEndState applies the callback lifecycle in many random
// orders, with random duplicates, and expects the in-order end state.
func TestShuffledOrderSameEndState(t *testing.T) {
	for _, hangup := range []bool{false, true} {
		t.Run(fmt.Sprintf("hangup=%v", hangup), func(t *testing.T) {
			forEachBackend(t, func(t *testing.T, b backend) {
				call := newCallback("fs1", "acme", 1)
				evs := events(call.lifecycle(100, hangup))
				run := func(prefix string, order []esl.Event) endState {
					sink := &cdrSink{}
					bb := b
					bb.prefix = prefix
					tr := newTracker(t, bb, sink)
					for _, e := range order {
						if err := tr.Apply(t.Context(), e); err != nil {
							t.Fatal(err)
						}
					}
					return collect(t, tr, sink, call)
				}
				want := run(b.prefix+"ref:", evs)
				if hangup && (len(want.Live) != 0 || len(want.CDRs) != 2) {
					t.Fatalf("reference: live %v, %d CDRs", want.Live, len(want.CDRs))
				}
				if !hangup && (want.Live[call.a.uuid] != StateBridged || want.Live[call.b.uuid] != StateBridged) {
					t.Fatalf("reference live = %v", want.Live)
				}
				rng := rand.New(rand.NewPCG(1, uint64(len(evs))))
				for i := range 150 {
					order := append([]esl.Event(nil), evs...)
					// Duplicate a few events, then shuffle everything.
					for range rng.IntN(4) {
						order = append(order, evs[rng.IntN(len(evs))])
					}
					rng.Shuffle(len(order), func(x, y int) { order[x], order[y] = order[y], order[x] })
					got := run(fmt.Sprintf("%sshuf%d:", b.prefix, i), order)
					w := want
					if hangup {
						got, w = afterHangup(got), afterHangup(want)
					}
					if !reflect.DeepEqual(got, w) {
						var names []string
						for _, e := range order {
							names = append(names, fmt.Sprintf("%s(%d)", e.Name(), e.Sequence()))
						}
						t.Fatalf("order %v:\n got %+v\nwant %+v", names, got, w)
					}
				}
			})
		})
	}
}

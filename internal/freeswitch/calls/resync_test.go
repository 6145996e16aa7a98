package calls

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"
)

// showRow builds one `show channels as json` row with every column
// FreeSWITCH prints (values are strings; NULL is "").
func showRow(uuid, name, direction, callstate, cidNum, dest, context, presence string, created time.Time) string {
	return fmt.Sprintf(`{"uuid":%q,"direction":%q,"created":%q,"created_epoch":"%d","name":%q,"state":"CS_EXECUTE","cid_name":"","cid_num":%q,"ip_addr":"","dest":%q,"application":"park","application_data":"","dialplan":"XML","context":%q,"read_codec":"PCMA","read_rate":"8000","read_bit_rate":"64000","write_codec":"PCMA","write_rate":"8000","write_bit_rate":"64000","secure":"","hostname":"fs1","presence_id":%q,"presence_data":"","accountcode":"","callstate":%q,"callee_name":"","callee_num":"","callee_direction":"","call_uuid":%q,"sent_callee_name":"","sent_callee_num":"","initial_cid_name":"","initial_cid_num":%q,"initial_ip_addr":"","initial_dest":%q,"initial_dialplan":"XML","initial_context":%q}`,
		uuid, direction, created.UTC().Format(time.DateTime), created.Unix(), name, cidNum, dest, context, presence, callstate, uuid, cidNum, dest, context)
}

func showBody(rows ...string) string {
	if len(rows) == 0 {
		return "{\"row_count\": 0}\n"
	}
	return fmt.Sprintf(`{"row_count":%d,"rows":[%s]}`, len(rows), strings.Join(rows, ","))
}

func TestResync(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		sink := &cdrSink{}
		tr := newTracker(t, b, sink)
		c1 := newCallback("fs1", "acme", 1)
		c2 := newCallback("fs1", "acme", 2)
		other := newCallback("fs2", "acme", 3)
		for _, e := range []struct {
			l   leg
			seq uint64
		}{{c1.a, 1}, {c2.a, 2}, {other.a, 3}} {
			if err := tr.Apply(ctx, e.l.ev("CHANNEL_ANSWER", e.seq)); err != nil {
				t.Fatal(err)
			}
		}
		// Seen ringing; answered while we were disconnected.
		c4 := newCallback("fs1", "acme", 4)
		if err := tr.Apply(ctx, c4.a.ev("CHANNEL_CREATE", 4)); err != nil {
			t.Fatal(err)
		}
		created := time.UnixMicro(baseMicro)
		newUUID := "c3c3c3c3-0000-4000-8000-000000000001"
		body := showBody(
			showRow(c1.a.uuid, c1.a.name, "outbound", "RINGING", "+442071234567", "447700900123", "default", "", created),
			showRow(c4.a.uuid, c4.a.name, "outbound", "ACTIVE", "+442071234567", "447700900123", "default", "", created),
			showRow(newUUID, "sofia/internal/1002-globex@sip.example.com", "inbound", "HELD", "1002", "5551234", "globex", "1002-globex@sip.example.com", created),
		)
		if err := tr.Resync(ctx, "fs1", body); err != nil {
			t.Fatal(err)
		}
		// c1.a is listed RINGING but was seen answered: no downgrade.
		want := map[string]string{c1.a.uuid: "answered", c4.a.uuid: "answered", newUUID: "held", other.a.uuid: "answered"}
		if got := liveStates(t, tr, ""); !maps.Equal(got, want) {
			t.Errorf("live after resync = %v, want %v", got, want)
		}
		// c2.a ended while we were away: one CDR with the resync cause.
		cdrs := sink.all()
		if len(cdrs) != 1 || cdrs[0].UUID != c2.a.uuid || cdrs[0].HangupCause != CauseEndedWhileDisconnected ||
			!cdrs[0].EndedAt.Equal(fixedNow) || cdrs[0].Billsec != int(fixedNow.Sub(cdrs[0].AnsweredAt).Round(time.Second).Seconds()) {
			t.Errorf("CDRs = %+v", cdrs)
		}
		added, err := tr.ByUUID(ctx, "fs1", newUUID)
		if err != nil {
			t.Fatal(err)
		}
		if added.ID != "SIP/1002-globex-00000001" || added.Tenant != "globex" || added.Extension != "1002" ||
			!added.StartedAt.Equal(time.Unix(created.Unix(), 0)) || added.Direction != "inbound" {
			t.Errorf("added channel = %+v", added)
		}
		if got := liveStates(t, tr, "globex"); !maps.Equal(got, map[string]string{newUUID: "held"}) {
			t.Errorf("globex live = %v", got)
		}
		// Resync again with the same list: nothing changes.
		before := snapshot(t, b.rdb, b.prefix)
		if err := tr.Resync(ctx, "fs1", body); err != nil {
			t.Fatal(err)
		}
		if after := snapshot(t, b.rdb, b.prefix); !maps.Equal(before, after) {
			t.Errorf("second resync changed Redis")
		}
		// Events after the resync refine a resynced channel.
		l := leg{node: "fs1", uuid: newUUID, name: "sofia/internal/1002-globex@sip.example.com", direction: "inbound", tenant: "globex", created: created.UnixMicro()}
		if err := tr.Apply(ctx, l.ev("CHANNEL_UNHOLD", 50)); err != nil {
			t.Fatal(err)
		}
		if ch, _ := tr.ByUUID(ctx, "fs1", newUUID); ch.State != StateAnswered {
			t.Errorf("after UNHOLD state = %q", ch.State)
		}
		// FreeSWITCH restarted: the empty list ends every channel of fs1 only.
		if err := tr.Resync(ctx, "fs1", "{\"row_count\": 0}\n"); err != nil {
			t.Fatal(err)
		}
		if got := liveStates(t, tr, ""); !maps.Equal(got, map[string]string{other.a.uuid: "answered"}) {
			t.Errorf("live after FreeSWITCH restart = %v", got)
		}
		if n := len(sink.all()); n != 4 {
			t.Errorf("got %d CDRs, want 4", n)
		}
	})
}

func TestResyncIntoEmptyRedis(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		tr := newTracker(t, b, nil)
		created := time.UnixMicro(baseMicro)
		body := showBody(
			showRow("d1", "sofia/external/447700900123", "outbound", "ACTIVE", "+442071234567", "447700900123", "default", "", created),
			showRow("d2", "loopback/3000-a", "outbound", "EARLY", "9999", "3000", "acme", "", created.Add(time.Second)),
		)
		if err := tr.Resync(ctx, "fs1", body); err != nil {
			t.Fatal(err)
		}
		chs, total, err := tr.List(ctx, "", 10, 0)
		if err != nil || total != 2 || len(chs) != 2 {
			t.Fatalf("List = %v, %d, %v", chs, total, err)
		}
		if chs[0].ID != "SIP/447700900123--00000001" || chs[0].State != StateAnswered || chs[0].Tenant != "" {
			t.Errorf("first = %+v", chs[0])
		}
		if chs[1].ID != "Local/3000-acme-00000001" || chs[1].State != StateEarly {
			t.Errorf("second = %+v", chs[1])
		}
		if got := liveStates(t, tr, "acme"); len(got) != 1 {
			t.Errorf("acme live = %v", got)
		}
	})
}

func TestResyncSparesNewChannels(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		tr := newTracker(t, b, nil)
		// Created 2 s before the resync: possibly after `show channels` ran.
		l := newCallback("fs1", "acme", 1).a
		l.created = fixedNow.Add(-2 * time.Second).UnixMicro()
		if err := tr.Apply(ctx, l.ev("CHANNEL_CREATE", 1)); err != nil {
			t.Fatal(err)
		}
		if err := tr.Resync(ctx, "fs1", "{\"row_count\": 0}\n"); err != nil {
			t.Fatal(err)
		}
		if got := liveStates(t, tr, ""); got[l.uuid] != StateRinging {
			t.Errorf("live = %v, want the new channel kept", got)
		}
	})
}

func TestResyncRejectsBadBody(t *testing.T) {
	tr := newTracker(t, backends(t)[0], nil)
	if err := tr.Resync(t.Context(), "fs1", "-ERR no reply\n"); err == nil {
		t.Error("Resync accepted a non-JSON body")
	}
}

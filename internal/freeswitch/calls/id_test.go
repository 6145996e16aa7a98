package calls

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/freeswitch/esl"
	"github.com/switchboard/switchboard/internal/platform/redistest"
)

func TestParseID(t *testing.T) {
	tests := []struct {
		name, id                  string
		tech, chName, tenant, seq string
		wantErr                   bool
	}{
		{name: "extension", id: "SIP/1001-acme-0000002a", tech: "SIP", chName: "1001", tenant: "acme", seq: "0000002a"},
		{name: "external number", id: "SIP/+447700900123-acme_uk-ffffffff", tech: "SIP", chName: "+447700900123", tenant: "acme_uk", seq: "ffffffff"},
		{name: "loopback, no tenant", id: "Local/3000--00000001", tech: "Local", chName: "3000", seq: "00000001"},
		{name: "feature code", id: "VERTO/*98#.x-t1-00000003", tech: "VERTO", chName: "*98#.x", tenant: "t1", seq: "00000003"},
		{name: "uppercase hex", id: "SIP/1001-acme-0000002A", wantErr: true},
		{name: "short sequence", id: "SIP/1001-acme-2a", wantErr: true},
		{name: "hyphen in name", id: "SIP/10-01-acme-0000002a", wantErr: true},
		{name: "no technology", id: "1001-acme-0000002a", wantErr: true},
		{name: "one-letter tenant", id: "SIP/1001-a-0000002a", wantErr: true},
		{name: "empty", id: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tech, name, tenant, seq, err := ParseID(tt.id)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseID(%q) = %q %q %q %q, want error", tt.id, tech, name, tenant, seq)
				}
				return
			}
			if err != nil || tech != tt.tech || name != tt.chName || tenant != tt.tenant || seq != tt.seq {
				t.Fatalf("ParseID(%q) = %q %q %q %q %v", tt.id, tech, name, tenant, seq, err)
			}
			if back := FormatID(tech, name, tenant, parseHex(t, seq)); back != tt.id {
				t.Errorf("FormatID round trip = %q, want %q", back, tt.id)
			}
		})
	}
}

func parseHex(t *testing.T, s string) uint64 {
	t.Helper()
	var n uint64
	for _, r := range s {
		n = n*16 + uint64(indexHex(r))
	}
	return n
}

func indexHex(r rune) int {
	if r >= 'a' {
		return int(r-'a') + 10
	}
	return int(r - '0')
}

// TestChannelIdentity checks the id given to channels of each kind, from
// events built like FreeSWITCH's, and that the ids parse back.
func TestChannelIdentity(t *testing.T) {
	tests := []struct {
		name    string
		headers map[string]string
		exists  func(string) bool
		wantID  string
	}{
		{name: "registered extension via sb vars", headers: map[string]string{
			"Channel-Name": "sofia/internal/1001-acme@sip.example.com", "Call-Direction": "inbound",
			"variable_sb_tenant": "acme", "variable_sb_ext": "1001", "Caller-Caller-ID-Number": "1001", "Caller-Context": "acme"},
			wantID: "SIP/1001-acme-00000001"},
		{name: "user_context names the tenant", headers: map[string]string{
			"Channel-Name": "sofia/internal/1002-acme@sip.example.com", "Call-Direction": "inbound",
			"variable_user_context": "acme", "Caller-Caller-ID-Number": "1002", "Caller-Context": "acme"},
			wantID: "SIP/1002-acme-00000001"},
		{name: "inbound trunk call in public: no tenant, caller number", headers: map[string]string{
			"Channel-Name": "sofia/external/+44 7700-900123@carrier.example", "Call-Direction": "inbound",
			"Caller-Caller-ID-Number": "+44 7700-900123", "Caller-Destination-Number": "442071234567", "Caller-Context": "public"},
			wantID: "SIP/+447700900123--00000001"},
		{name: "outbound gateway leg: number dialled", headers: map[string]string{
			"Channel-Name": "sofia/external/447700900123", "Call-Direction": "outbound", "variable_sb_tenant": "acme",
			"Caller-Caller-ID-Number": "+442071234567", "Caller-Destination-Number": "447700900123"},
			wantID: "SIP/447700900123-acme-00000001"},
		{name: "loopback", headers: map[string]string{
			"Channel-Name": "loopback/3000-a", "Call-Direction": "outbound", "Caller-Destination-Number": "3000", "Caller-Context": "default"},
			wantID: "Local/3000--00000001"},
		{name: "other endpoint upper-cased", headers: map[string]string{
			"Channel-Name": "verto.rtc/1003@acme", "Call-Direction": "inbound", "variable_sb_tenant": "acme", "variable_sb_ext": "1003"},
			wantID: "VERTORTC/1003-acme-00000001"},
		{name: "context that is not a known tenant", exists: func(string) bool { return false }, headers: map[string]string{
			"Channel-Name": "sofia/internal/1001@x", "Call-Direction": "inbound", "Caller-Caller-ID-Number": "1001", "Caller-Context": "acme"},
			wantID: "SIP/1001--00000001"},
		{name: "bad sb_tenant falls back to context", headers: map[string]string{
			"Channel-Name": "sofia/internal/1001@x", "Call-Direction": "inbound", "variable_sb_tenant": "ac-me",
			"Caller-Caller-ID-Number": "1001", "Caller-Context": "globex"},
			wantID: "SIP/1001-globex-00000001"},
		{name: "registered user known by presence id", headers: map[string]string{
			"Channel-Name": "sofia/internal/1004-acme@sip.example.com", "Call-Direction": "inbound",
			"variable_presence_id": "1004-acme@sip.example.com", "Caller-Caller-ID-Number": "1004-acme", "Caller-Context": "public"},
			wantID: "SIP/1004-acme-00000001"},
		{name: "nothing usable for the name", headers: map[string]string{
			"Channel-Name": "sofia/internal/@x", "Call-Direction": "inbound", "variable_sb_tenant": "acme"},
			wantID: "SIP/unknown-acme-00000001"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := backends(t)[0]
			tr := NewTracker(b.rdb, Options{TenantExists: tt.exists, Now: func() time.Time { return fixedNow }})
			h := map[string]string{"Event-Name": "CHANNEL_CREATE", "Unique-ID": "u-1", "Event-Sequence": "7"}
			for k, v := range tt.headers {
				h[k] = v
			}
			if err := tr.Apply(t.Context(), esl.NewEvent("fs1", h, "")); err != nil {
				t.Fatal(err)
			}
			ch, err := tr.ByUUID(t.Context(), "fs1", "u-1")
			if err != nil {
				t.Fatal(err)
			}
			if ch.ID != tt.wantID {
				t.Fatalf("id = %q, want %q", ch.ID, tt.wantID)
			}
			if _, _, tenant, _, err := ParseID(ch.ID); err != nil || tenant != ch.Tenant {
				t.Errorf("ParseID(%q) tenant %q, %v; channel tenant %q", ch.ID, tenant, err, ch.Tenant)
			}
			if got, err := tr.Get(t.Context(), ch.ID); err != nil || got.UUID != "u-1" {
				t.Errorf("Get(%q) = %+v, %v", ch.ID, got, err)
			}
		})
	}
}

func TestIDSequencePerTenant(t *testing.T) {
	b := backends(t)[0]
	tr := newTracker(t, b, nil)
	var got []string
	for i, l := range []leg{
		newCallback("fs1", "acme", 1).a, newCallback("fs1", "globex", 2).a,
		newCallback("fs2", "acme", 3).a, newCallback("fs1", "acme", 4).b,
	} {
		if err := tr.Apply(t.Context(), l.ev("CHANNEL_CREATE", uint64(i+1))); err != nil {
			t.Fatal(err)
		}
		ch, err := tr.ByUUID(t.Context(), l.node, l.uuid)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ch.ID)
	}
	want := []string{"SIP/1001-acme-00000001", "SIP/1001-globex-00000001", "SIP/1001-acme-00000002", "SIP/442079876543-acme-00000003"}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("id %d = %q, want %q", i, got[i], want[i])
		}
	}
}

func TestApplyIgnoresOtherEvents(t *testing.T) {
	b := backends(t)[0]
	tr := newTracker(t, b, nil)
	ctx := t.Context()
	job := esl.NewEvent("fs1", map[string]string{"Event-Name": "BACKGROUND_JOB", "Job-UUID": "j"}, "+OK x\n")
	if err := tr.Apply(ctx, job); err != nil {
		t.Errorf("BACKGROUND_JOB: %v", err)
	}
	noID := esl.NewEvent("fs1", map[string]string{"Event-Name": "CHANNEL_ANSWER"}, "")
	if err := tr.Apply(ctx, noID); err == nil {
		t.Error("CHANNEL_ANSWER without Unique-ID accepted")
	}
	if keys := b.rdb.Keys(ctx, "*").Val(); len(keys) != 0 {
		t.Errorf("keys written: %v", keys)
	}
}

// TestPatchArgsOrder checks that args sends every patch field at the index
// patchFields (and so the script) expects.
func TestPatchArgsOrder(t *testing.T) {
	p := patch{Prefix: "a", Kind: "b", Node: "c", UUID: "d", Seq: 5, Now: "e", NowUnix: 6, TTL: 7, GuardTTL: 8, QueueCDR: true,
		Tech: "f", Name: "g", Tenant: "h", Direction: "i", Extension: "j", Context: "k", CallUUID: "l",
		CallerIDName: "m", CallerIDNumber: "n", Destination: "o", StartedAt: "p", StartedUs: "q", Score: "r",
		AnsweredAt: "s", BridgedAt: "t", Rank: 9, Held: false, Peer: "u", RecordPath: "v",
		HangupCause: "w", EndedAt: "x", Duration: 10, Billsec: 11, CutoffUs: "y"}
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var byName map[string]any
	if err := json.Unmarshal(raw, &byName); err != nil {
		t.Fatal(err)
	}
	args := p.args()
	if len(args) != len(patchFields) || len(byName) != len(patchFields) {
		t.Fatalf("%d args, %d fields, %d json fields", len(args), len(patchFields), len(byName))
	}
	for i, f := range patchFields {
		want := fmt.Sprint(byName[f])
		if v, ok := byName[f].(bool); ok {
			want = flag(v)
		}
		if got := fmt.Sprint(args[i]); got != want {
			t.Errorf("arg %d (%s) = %q, want %q", i+1, f, got, want)
		}
	}
}

// TestScriptKeysShareOneSlot: the apply script receives its keys in KEYS
// and forms the rest (a new channel's id key, a remembered peer's record)
// from the same prefix; Redis Cluster runs it only when they all share a
// slot, which the prefix's hash tag makes so, also for a prefix configured
// without one.
func TestScriptKeysShareOneSlot(t *testing.T) {
	for _, prefix := range []string{"", "sb:", "other:{t1}:"} {
		tr := NewTracker(nil, Options{Prefix: prefix})
		p := patch{Prefix: tr.prefix, Node: "fs1", UUID: "u1", Tenant: "acme", Peer: "u2"}
		keys := append(p.keys(), tr.prefix+"chid:SIP/1001-acme-00000001", tr.prefix+"live:globex",
			tr.callKey("c1"), tr.streamKey(), tr.liveKey(""))
		if len(p.keys()) != 11 {
			t.Fatalf("%d keys, apply.lua documents 11", len(p.keys()))
		}
		redistest.SameSlot(t, keys...)
		if redistest.HashTag(keys[0]) == keys[0] {
			t.Errorf("prefix %q: no hash tag in %q", prefix, keys[0])
		}
	}
}

package calls

import (
	"strings"
	"testing"
)

// TestInboundDIDEntersItsTenant replays what a real FreeSWITCH sends for a
// carrier call to a DID: CHANNEL_CREATE in context public without
// sb_tenant, then CHANNEL_ANSWER in the tenant's context with sb_tenant
// set by the public dialplan. The channel moves into the tenant (its
// tenant key lists it, under an id of the tenant's; the first id still
// resolves) and its CDR carries the tenant.
func TestInboundDIDEntersItsTenant(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := t.Context()
		sink := &cdrSink{}
		tr := newTracker(t, b, sink)
		in := leg{node: "fs1", uuid: "d0000001-8b1d-4c7e-9f3a-2b6d1e0a9c47", name: "sofia/external/+15557654321@198.51.100.7",
			direction: "inbound", cidName: "Carrier", cidNum: "+15557654321", dest: "+15550001000",
			context: "public", created: baseMicro}
		if err := tr.Apply(ctx, in.ev("CHANNEL_CREATE", 1)); err != nil {
			t.Fatal(err)
		}
		first, _, err := tr.List(ctx, "", 0, 0)
		if err != nil || len(first) != 1 || first[0].Tenant != "" {
			t.Fatalf("after CREATE: %+v %v", first, err)
		}
		oldID := first[0].ID

		entered := in
		entered.context, entered.tenant, entered.dest = "acme", "acme", "1001"
		if err := tr.Apply(ctx, entered.ev("CHANNEL_ANSWER", 2)); err != nil {
			t.Fatal(err)
		}
		mine, _, err := tr.List(ctx, "acme", 0, 0)
		if err != nil || len(mine) != 1 {
			t.Fatalf("tenant list %+v %v", mine, err)
		}
		ch := mine[0]
		if ch.Tenant != "acme" || ch.Context != "acme" || !strings.HasSuffix(strings.TrimRight(ch.ID, "0123456789abcdef"), "-acme-") || ch.ID == oldID {
			t.Errorf("moved channel %+v (first id %s)", ch, oldID)
		}
		if _, _, tenant, _, err := ParseID(ch.ID); err != nil || tenant != "acme" {
			t.Errorf("new id %q: tenant %q %v", ch.ID, tenant, err)
		}
		byOld, err := tr.Get(ctx, oldID)
		if err != nil || byOld.ID != ch.ID {
			t.Errorf("old id %s resolves to %+v, %v", oldID, byOld, err)
		}
		if err := tr.Apply(ctx, entered.ev("CHANNEL_HANGUP_COMPLETE", 3, "Hangup-Cause", "NORMAL_CLEARING")); err != nil {
			t.Fatal(err)
		}
		cdrs := sink.all()
		if len(cdrs) != 1 || cdrs[0].Tenant != "acme" || cdrs[0].ChannelID != ch.ID {
			t.Fatalf("cdrs %+v", cdrs)
		}
		if left, _, _ := tr.List(ctx, "acme", 0, 0); len(left) != 0 {
			t.Errorf("still listed: %+v", left)
		}
	})
}

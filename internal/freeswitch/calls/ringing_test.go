package calls

import (
	"context"
	"testing"
)

// TestRingingAt: only the tenant's unanswered legs placed to the extension
// are returned; the extension's own outgoing call, an answered leg, another
// extension and another tenant's channel for the same extension are not.
func TestRingingAt(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := context.Background()
		tr := newTracker(t, b, nil)
		mk := func(uuid, dir, tenant, ext string) leg {
			return leg{node: "fs1", uuid: uuid, name: "sofia/internal/" + ext, direction: dir,
				cidNum: "1002", dest: ext, tenant: tenant, ext: ext, context: tenant, created: baseMicro}
		}
		ringing := mk("11111111-0000-4000-8000-000000000001", "outbound", "acme", "1001")
		early := mk("11111111-0000-4000-8000-000000000002", "outbound", "acme", "1001")
		answered := mk("11111111-0000-4000-8000-000000000003", "outbound", "acme", "1001")
		placing := mk("11111111-0000-4000-8000-000000000004", "inbound", "acme", "1001")
		otherExt := mk("11111111-0000-4000-8000-000000000005", "outbound", "acme", "1005")
		otherTenant := mk("11111111-0000-4000-8000-000000000006", "outbound", "globex", "1001")
		for _, e := range []struct {
			l    leg
			name string
		}{
			{ringing, "CHANNEL_CREATE"}, {early, "CHANNEL_PROGRESS_MEDIA"}, {answered, "CHANNEL_ANSWER"},
			{placing, "CHANNEL_CREATE"}, {otherExt, "CHANNEL_CREATE"}, {otherTenant, "CHANNEL_CREATE"},
		} {
			if err := tr.Apply(ctx, e.l.ev(e.name, 1)); err != nil {
				t.Fatal(err)
			}
		}
		got, err := tr.RingingAt(ctx, "acme", "1001")
		if err != nil {
			t.Fatal(err)
		}
		var uuids []string
		for _, ch := range got {
			uuids = append(uuids, ch.UUID)
		}
		if len(uuids) != 2 || uuids[0] != ringing.uuid && uuids[1] != ringing.uuid || uuids[0] != early.uuid && uuids[1] != early.uuid {
			t.Fatalf("ringing at acme/1001 = %v, want the ringing and early outbound legs", uuids)
		}
		if got, _ := tr.RingingAt(ctx, "acme", "1009"); len(got) != 0 {
			t.Fatalf("nothing rings at 1009, got %v", got)
		}
	})
}

package features_test

import (
	"context"
	"errors"
	"net/textproto"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/esl"
	"github.com/switchboard/switchboard/features"
	"github.com/switchboard/switchboard/models"
	"github.com/switchboard/switchboard/models/storetest"
)

// event builds a feature event as FreeSWITCH's event application fires it
// (header names canonical, as eslgo delivers them).
func event(seq, tenant, ext, feature string, kv ...string) esl.Event {
	h := map[string]string{"Event-Name": "CUSTOM", "Event-Subclass": esl.FeatureSubclass, "Core-UUID": "core-1",
		"Event-Sequence": seq, "sb_feature": feature, "variable_sb_tenant": tenant, "variable_sb_ext": ext}
	for i := 0; i+1 < len(kv); i += 2 {
		h[kv[i]] = kv[i+1]
	}
	out := esl.Event{Node: "fs1", Headers: map[string]string{}}
	for k, v := range h {
		out.Headers[textproto.CanonicalMIMEHeaderKey(k)] = v
	}
	return out
}

// TestFeatureEventsAppliedOnce: a toggle applies once per event even when
// the event is delivered twice; a wrong PIN changes nothing; the write
// goes through the store (so it is in the outbox like any API write).
func TestFeatureEventsAppliedOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		tenant := storetest.Name("feat")
		if _, err := st.Create(ctx, st.Registry().Resource("tenants"), models.Owner{}, map[string]any{"tenant": tenant}); err != nil {
			t.Fatal(err)
		}
		o, err := st.Tenant(ctx, tenant)
		if err != nil {
			t.Fatal(err)
		}
		exts := st.Registry().Resource("extensions")
		if _, err := st.Create(ctx, exts, o, map[string]any{"name": "1001", "voicemail_pin": "2468"}); err != nil {
			t.Fatal(err)
		}
		rdb := redis.NewClient(&redis.Options{Addr: miniredis.RunT(t).Addr()})
		defer rdb.Close()
		a, b := features.New(st, rdb, nil), features.New(st, rdb, nil) // two replicas
		dnd := func() any {
			rec, err := st.Get(ctx, exts, o, "1001")
			if err != nil {
				t.Fatal(err)
			}
			return rec["dnd"]
		}
		e := event("17", tenant, "1001", "dnd_toggle")
		for _, ap := range []*features.Applier{a, b, a} {
			if err := ap.Apply(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
		if dnd() != true {
			t.Fatalf("dnd %v after one event delivered three times", dnd())
		}
		if err := b.Apply(ctx, event("18", tenant, "1001", "dnd_toggle")); err != nil || dnd() != false {
			t.Fatalf("second event: %v, dnd %v", err, dnd())
		}
		err = a.Apply(ctx, event("19", tenant, "1001", "dnd_toggle", "variable_sb_pin", "1111"))
		if !errors.Is(err, features.ErrRefused) || dnd() != false {
			t.Fatalf("wrong PIN: %v, dnd %v", err, dnd())
		}
		if err := a.Apply(ctx, event("20", tenant, "1001", "dnd_toggle", "variable_sb_pin", "2468")); err != nil || dnd() != true {
			t.Fatalf("right PIN: %v, dnd %v", err, dnd())
		}
		if err := a.Apply(ctx, event("21", tenant, "1009", "dnd_toggle")); !errors.Is(err, features.ErrRefused) {
			t.Fatalf("unknown extension: %v", err)
		}
	})
}

package features_test

import (
	"context"
	"errors"
	"fmt"
	"net/textproto"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/freeswitch/esl"
	"github.com/switchboard/switchboard/internal/freeswitch/features"
	"github.com/switchboard/switchboard/internal/media"
	"github.com/switchboard/switchboard/internal/media/mediatest"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
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

// TestRecordPromptEvent: the *732 event turns the node's recording
// (<media dir>/<tenant>/phone/<call uuid>.wav) into a voice prompt through
// the store, converted into the media library where uploads go; the
// recording is removed, a repeated event makes no second prompt, and a
// code that asks for a PIN refuses an event without the right one (even
// an empty entry).
func TestRecordPromptEvent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		dir := t.TempDir()
		st.SetAudioSink(&media.Service{Store: st, Lib: &media.Library{Root: dir, MaxBytes: 64 << 20, Conv: media.Converter{Sox: "sox", Timeout: time.Minute}}})
		tenant := storetest.Name("rec")
		if _, err := st.Create(ctx, st.Registry().Resource("tenants"), models.Owner{}, map[string]any{"tenant": tenant}); err != nil {
			t.Fatal(err)
		}
		o, err := st.Tenant(ctx, tenant)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Create(ctx, st.Registry().Resource("extensions"), o, map[string]any{"name": "1001", "voicemail_pin": "2468"}); err != nil {
			t.Fatal(err)
		}
		tone := mediatest.Tone(t, "rec.wav", 2)
		record := func(uuid string) string {
			p := filepath.Join(dir, features.PhoneRecordingRel(tenant, uuid))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, tone, 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}
		prompts := func() []models.Record {
			recs, err := st.Records(ctx, st.Registry().Resource("voice_prompts"), o, nil)
			if err != nil {
				t.Fatal(err)
			}
			return recs
		}
		a := features.New(st, nil, nil)
		a.MediaDir = dir
		const uuid = "0b6f3c1e-9a2d-4c55-8e1f-2d3c4b5a6978"
		raw := record(uuid)
		e := event("30", tenant, "1001", "record_prompt", "Unique-ID", uuid, "Event-Date-Timestamp", "1795752851000000")
		if err := a.Apply(ctx, e); err != nil {
			t.Fatal(err)
		}
		got := prompts()
		if len(got) != 1 {
			t.Fatalf("prompts %v", got)
		}
		p := got[0]
		if p["name"] != "Phone recording 1001 2026-11-27 04:14:11" || p["source"] != "phone" || p["format"] != "wav" || p["duration_ms"] != int64(2000) {
			t.Fatalf("prompt %v", p)
		}
		if _, err := os.Stat(filepath.Join(dir, tenant, p["filename"].(string))); err != nil {
			t.Fatalf("the prompt's file is not where uploads go: %v", err)
		}
		if _, err := os.Stat(raw); !os.IsNotExist(err) {
			t.Fatalf("the node's recording is still there: %v", err)
		}
		// The same event again (no once-guard here: no Redis) finds it made.
		record(uuid)
		if err := a.Apply(ctx, e); err != nil || len(prompts()) != 1 {
			t.Fatalf("repeat: %v, %d prompts", err, len(prompts()))
		}
		// No recording (the caller hung up before it was kept): refused.
		if err := a.Apply(ctx, event("31", tenant, "1001", "record_prompt", "Unique-ID", "1b6f3c1e-9a2d-4c55-8e1f-2d3c4b5a6978")); !errors.Is(err, features.ErrRefused) {
			t.Fatalf("no recording: %v", err)
		}
		// A call id that would leave the directory is refused.
		if err := a.Apply(ctx, event("32", tenant, "1001", "record_prompt", "Unique-ID", "../../x")); !errors.Is(err, features.ErrRefused) {
			t.Fatalf("bad call id: %v", err)
		}
		// With a PIN required: none and a wrong one are refused, the
		// voicemail PIN is taken.
		codes, err := st.Records(ctx, st.Registry().Resource("feature_extensions"), o, map[string]any{"feature": "record_prompt"})
		if err != nil || len(codes) != 1 {
			t.Fatalf("default record_prompt code: %v %v", codes, err)
		}
		if _, err := st.Update(ctx, st.Registry().Resource("feature_extensions"), o, fmt.Sprint(codes[0]["id"]), map[string]any{"pin_required": true}); err != nil {
			t.Fatal(err)
		}
		const uuid2 = "2b6f3c1e-9a2d-4c55-8e1f-2d3c4b5a6978"
		for seq, pin := range map[string]string{"33": "", "34": "1111"} {
			raw := record(uuid2)
			if err := a.Apply(ctx, event(seq, tenant, "1001", "record_prompt", "Unique-ID", uuid2, "variable_sb_pin", pin)); !errors.Is(err, features.ErrRefused) {
				t.Fatalf("PIN %q: %v", pin, err)
			}
			if _, err := os.Stat(raw); !os.IsNotExist(err) || len(prompts()) != 1 {
				t.Fatalf("PIN %q: recording kept (%v) or prompt made (%d)", pin, err, len(prompts()))
			}
		}
		record(uuid2)
		if err := a.Apply(ctx, event("35", tenant, "1001", "record_prompt", "Unique-ID", uuid2, "variable_sb_pin", "2468", "Event-Date-Timestamp", "1795752900000000")); err != nil || len(prompts()) != 2 {
			t.Fatalf("right PIN: %v, %d prompts", err, len(prompts()))
		}
	})
}

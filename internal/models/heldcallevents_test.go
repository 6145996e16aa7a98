package models_test

import (
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// TestHeldCallEventsKeptUntilReleased: a held batch is read back as it was
// given, only once it is older than the asked time, and not after its
// release. (Other tests may hold batches in the shared database: only this
// test's ids count.)
func TestHeldCallEventsKeptUntilReleased(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := t.Context()
		events := []byte(`[{"Node":"fs1","Headers":{"Event-Name":"CHANNEL_HANGUP_COMPLETE"},"Body":""}]`)
		before := time.Now()
		id, err := st.HoldCallEvents(ctx, events)
		if err != nil || id == 0 {
			t.Fatalf("hold: %d, %v", id, err)
		}
		find := func(at time.Time) *models.HeldCallEvents {
			held, err := st.HeldCallEventsBefore(ctx, at, 1000)
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range held {
				if h.ID == id {
					return &h
				}
			}
			return nil
		}
		if h := find(before.Add(-time.Second)); h != nil {
			t.Fatalf("a batch held now is listed as held before a second ago")
		}
		h := find(time.Now().Add(time.Second))
		if h == nil || string(h.Events) != string(events) || h.At.Before(before.Add(-time.Second)) {
			t.Fatalf("held batch %+v", h)
		}
		if err := st.ReleaseCallEvents(ctx, id); err != nil {
			t.Fatal(err)
		}
		if h := find(time.Now().Add(time.Second)); h != nil {
			t.Fatal("a released batch is still held")
		}
	})
}

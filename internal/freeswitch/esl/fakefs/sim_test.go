package fakefs

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"
)

func TestRunSimPlacesTaggedCalls(t *testing.T) {
	s := startFake(t, Options{})
	c := mustESL(t, s.Addr())
	col := newCollector(c)
	subscribe(t, c, "CHANNEL_BRIDGE", "CHANNEL_HANGUP_COMPLETE")

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- RunSim(ctx, s, SimOptions{
			CallsPerSecond: 200, MeanDurationSeconds: 0.02,
			Tenants: []string{"acme", "globex"}, Extensions: []string{"1001", "1002"},
			Rand: rand.New(rand.NewPCG(1, 2)),
		})
	}()
	evs := col.waitN(t, 10)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("RunSim did not stop")
	}
	for _, e := range evs {
		tenant, ext := e.GetHeader("Variable_sb_tenant"), e.GetHeader("Variable_sb_ext")
		if (tenant != "acme" && tenant != "globex") || (ext != "1001" && ext != "1002") {
			t.Errorf("%s %s: sb_tenant=%q sb_ext=%q", e.GetName(), e.GetHeader("Unique-Id"), tenant, ext)
		}
	}
	if n := len(s.Channels()); n != 0 {
		t.Errorf("%d channels left after the sim stopped", n)
	}
}

func TestRunSimNeedsTenants(t *testing.T) {
	s := startFake(t, Options{})
	if err := RunSim(t.Context(), s, SimOptions{Extensions: []string{"1001"}}); err == nil {
		t.Fatal("RunSim without tenants succeeded")
	}
}

package fakefs

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/google/uuid"
)

// SimOptions configures RunSim.
type SimOptions struct {
	// CallsPerSecond is the mean rate of new calls (default 1).
	CallsPerSecond float64
	// MeanDurationSeconds is the mean talk time, exponentially distributed
	// (default 30).
	MeanDurationSeconds float64
	// Tenants and Extensions are picked at random for each call; both are
	// required. The channels carry sb_tenant and sb_ext variables.
	Tenants    []string
	Extensions []string
	// Rand, if set, makes the run reproducible.
	Rand *rand.Rand
}

// RunSim keeps placing fake calls on srv until ctx ends: half inbound (an
// external caller reaching an extension), half outbound (an extension
// calling an external number). Each call creates both legs, answers,
// bridges and later hangs up, so dashboards have something to watch. Calls
// still up when ctx ends are hung up. It returns nil when ctx ends.
func RunSim(ctx context.Context, srv *Server, o SimOptions) error {
	if len(o.Tenants) == 0 || len(o.Extensions) == 0 {
		return errors.New("fakefs sim: tenants and extensions are required")
	}
	if o.CallsPerSecond <= 0 {
		o.CallsPerSecond = 1
	}
	if o.MeanDurationSeconds <= 0 {
		o.MeanDurationSeconds = 30
	}
	rng := o.Rand
	if rng == nil {
		rng = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	var mu sync.Mutex // guards rng, which is not safe for concurrent use
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		mu.Lock()
		wait := time.Duration(rng.ExpFloat64() / o.CallsPerSecond * float64(time.Second))
		tenant := o.Tenants[rng.IntN(len(o.Tenants))]
		ext := o.Extensions[rng.IntN(len(o.Extensions))]
		inbound := rng.IntN(2) == 0
		talk := time.Duration(rng.ExpFloat64() * o.MeanDurationSeconds * float64(time.Second))
		external := fmt.Sprintf("+4420%08d", rng.IntN(100000000))
		mu.Unlock()
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		a, err := SimCall(srv, tenant, ext, external, inbound)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-ctx.Done():
			case <-time.After(talk):
			}
			// The call may already be gone (uuid_kill from a test or the UI).
			_ = srv.Hangup(a, "NORMAL_CLEARING")
		}()
	}
}

// SimCall creates, answers and bridges both legs of one simulated call
// (tagged with tenant and ext, as RunSim places them) and returns the A
// leg's UUID; the call stays up until hung up. Tests use it to put a call
// on a dashboard.
func SimCall(srv *Server, tenant, ext, external string, inbound bool) (string, error) {
	vars := []Header{{"sb_tenant", tenant}, {"sb_ext", ext}, {"accountcode", tenant}}
	a := ChannelSpec{UUID: uuid.NewString(), Vars: vars, Answer: true}
	b := ChannelSpec{UUID: uuid.NewString(), Direction: "outbound", Vars: vars, Answer: true}
	if inbound {
		a.Name, a.CIDNum, a.Dest, a.Context = "sofia/external/"+external, external, ext, "public"
		b.Name, b.CIDNum, b.Dest, b.Context = "sofia/internal/"+ext+"-"+tenant, external, ext, tenant
	} else {
		a.Name, a.CIDNum, a.Dest, a.Context = "sofia/internal/"+ext+"-"+tenant, ext, external, tenant
		b.Name, b.CIDNum, b.Dest, b.Context = "sofia/external/"+external, ext, external, tenant
	}
	if _, err := srv.CreateChannel(a); err != nil {
		return "", fmt.Errorf("fakefs sim: %w", err)
	}
	b.Vars = append(b.Vars, Header{"originator", a.UUID})
	if _, err := srv.CreateChannel(b); err != nil {
		return "", fmt.Errorf("fakefs sim: %w", err)
	}
	if err := srv.Bridge(a.UUID, b.UUID); err != nil {
		return "", fmt.Errorf("fakefs sim: %w", err)
	}
	return a.UUID, nil
}

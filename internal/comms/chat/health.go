package chat

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// health is what the client last learned about the chat server: every
// admin API call reports whether the server answered, and Watch probes it
// when nothing else has for a while. Channel posts are accepted into the
// queue only while the server is believed up, so a known outage answers 503
// at once instead of queueing behind it.
type health struct {
	down atomic.Bool
	// last is when the server last answered or failed to (unix nanos).
	last atomic.Int64
	mu   sync.Mutex
	// onUp are called (without blocking) when the server comes back.
	onUp []func()
}

// observe records one call's outcome: reachable or not.
func (h *health) observe(reachable bool) {
	h.last.Store(time.Now().UnixNano())
	if reachable {
		if h.down.Swap(false) {
			h.mu.Lock()
			fns := append([]func(){}, h.onUp...)
			h.mu.Unlock()
			for _, fn := range fns {
				fn()
			}
		}
		return
	}
	h.down.Store(true)
}

// Up reports whether the chat server is configured and answered its last
// call or probe.
func (c *Client) Up() bool { return c.cfg.Enabled() && !c.health.down.Load() }

// OnUp registers fn to run when the server answers again after an outage
// (the queue's worker resumes at once). fn must not block.
func (c *Client) OnUp(fn func()) {
	c.health.mu.Lock()
	c.health.onUp = append(c.health.onUp, fn)
	c.health.mu.Unlock()
}

// Watch probes the server (the status command) whenever no call has
// reached it for every, until ctx ends, so an outage is noticed, and the
// end of one, within about every even when nothing is being sent.
func (c *Client) Watch(ctx context.Context, every time.Duration) {
	if !c.cfg.Enabled() {
		return
	}
	t := time.NewTicker(every / 2)
	defer t.Stop()
	for {
		if time.Since(time.Unix(0, c.health.last.Load())) >= every || c.health.down.Load() {
			pctx, cancel := context.WithTimeout(ctx, every)
			err := c.Status(pctx) // call records an answer or a refusal
			if err != nil && pctx.Err() != nil && ctx.Err() == nil {
				c.health.observe(false) // no answer within every: as good as down
			}
			cancel()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

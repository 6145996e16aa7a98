package esl

import (
	"context"
	"log/slog"
	"time"

	"github.com/percipia/eslgo"

	"github.com/switchboard/switchboard/internal/platform/lease"
)

// eventLoop consumes the node's event stream while this replica may: always
// without a lease, otherwise only while it holds the node's lease (a
// lease.Holder renews it every TTL/3, tolerating failed renewals for a
// TTL, and releases it when the connection ends, so that another replica
// may take the node while this one backs off).
func (n *node) eventLoop(ctx context.Context) {
	log := n.log.With("conn", "events")
	var hold *lease.Holder
	rl := n.p.opts.EventLease
	if rl != nil {
		hold = lease.NewHolder(rl.Node(n.cfg.Name), lease.Options{Grace: rl.TTL(), Logger: log})
	}
	waiting := false
	for attempt := 0; ctx.Err() == nil; {
		var (
			connected bool
			err       error
		)
		if hold == nil {
			connected, err = n.consume(ctx, log)
		} else {
			held, lerr := hold.Term(ctx, func(lctx context.Context) {
				waiting = false
				log.Info("esl event lease acquired", "replica", rl.Replica())
				connected, err = n.consume(lctx, log)
			})
			if !held {
				switch {
				case lerr != nil && ctx.Err() == nil:
					log.Warn("esl event lease unavailable", "err", lerr)
				case lerr == nil && !waiting:
					log.Info("esl events held by another replica")
					waiting = true
				}
				if !sleep(ctx, jitter(rl.TTL()/3)) {
					break
				}
				continue
			}
			if lerr != nil {
				n.setEventsHeld(false)
				if connected {
					attempt = 0
				}
				if ctx.Err() != nil {
					break
				}
				log.Warn("esl event lease lost", "err", lerr)
				continue
			}
		}
		n.setEventsHeld(false)
		if ctx.Err() != nil {
			break
		}
		if connected {
			attempt = 0
		}
		n.reportState(ctx, false, err)
		d := n.p.backoff(attempt)
		attempt++
		log.Warn("esl events disconnected", "err", err, "backoff", d)
		if !sleep(ctx, d) {
			break
		}
	}
}

// consume runs one event connection: dial, subscribe, OnConnect (with
// events held back), then watch it with probes until it drops or ctx ends
// (the event lease lost). It reports whether the connection was
// established.
func (n *node) consume(ctx context.Context, log *slog.Logger) (bool, error) {
	log.Debug("esl connecting")
	l, err := n.connect(ctx)
	if err != nil {
		return false, err
	}
	defer l.close()
	n.disp.pause()
	defer n.disp.resume()
	l.c.RegisterEventListener(eslgo.EventListenAll, func(e *eslgo.Event) {
		n.lastEvent.Store(time.Now().UnixNano())
		n.disp.push(ctx, convert(n.cfg.Name, e), fromEvents)
	})
	if err := n.subscribe(ctx, l, subscribeLine); err != nil {
		return false, err
	}
	n.setEventsHeld(true)
	log.Info("esl events subscribed")
	n.reportState(ctx, true, nil)
	if cb := n.p.opts.OnConnect; cb != nil {
		n.waitCommandUp(ctx, n.p.opts.DialTimeout)
		cb(ctx, n.cfg.Name)
	}
	n.disp.resume()
	return true, n.watch(ctx, l, nil)
}

// jitter returns a random duration between d/2 and d.
func jitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	return d/2 + time.Duration(randN(int64(d/2)))
}

// reportState tells OnNodeState, if set, the event connection's state.
func (n *node) reportState(ctx context.Context, up bool, cause error) {
	if cb := n.p.opts.OnNodeState; cb != nil {
		cb(ctx, n.cfg.Name, up, cause)
	}
}

package esl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/percipia/eslgo"
)

// eventLoop consumes the node's event stream while this replica may: always
// without a lease, otherwise only while it holds the node's lease.
func (n *node) eventLoop(ctx context.Context) {
	log := n.log.With("conn", "events")
	lease := n.p.opts.EventLease
	waiting := false
	for attempt := 0; ctx.Err() == nil; {
		if lease != nil {
			held, err := lease.Acquire(ctx, n.cfg.Name)
			if err != nil {
				if ctx.Err() == nil {
					log.Warn("esl event lease unavailable", "err", err)
				}
				if !sleep(ctx, jitter(lease.TTL()/3)) {
					break
				}
				continue
			}
			if !held {
				if !waiting {
					log.Info("esl events held by another replica")
					waiting = true
				}
				if !sleep(ctx, jitter(lease.TTL()/3)) {
					break
				}
				continue
			}
			waiting = false
			log.Info("esl event lease acquired", "replica", lease.Replica())
		}
		connected, err := n.consume(ctx, log)
		n.setEventsHeld(false)
		if lease != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			if rerr := lease.Release(rctx, n.cfg.Name); rerr != nil {
				log.Warn("esl event lease release failed", "err", rerr)
			}
			cancel()
		}
		if ctx.Err() != nil {
			break
		}
		if connected {
			attempt = 0
		}
		if errors.Is(err, errLeaseLost) {
			log.Warn("esl event lease lost", "err", err)
			continue
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
// events held back), then watch it with probes and lease renewals. It
// reports whether the connection was established.
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
	var renew func() error
	if lease := n.p.opts.EventLease; lease != nil {
		last := time.Now()
		renew = func() error {
			ok, err := lease.Renew(ctx, n.cfg.Name)
			switch {
			case err == nil && !ok:
				return errLeaseLost
			case err != nil && time.Since(last) >= lease.TTL():
				return fmt.Errorf("%w: %w", errLeaseLost, err)
			case err == nil:
				last = time.Now()
			}
			return nil
		}
	}
	return true, n.watch(ctx, l, nil, renew)
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

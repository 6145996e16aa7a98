package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/models"
)

// benchWebhooks emits events at a fixed rate into the outbox of a running
// server and measures their delivery to a local receiver: throughput, the
// outbox depth and the pending deliveries while it runs, and how long both
// take to return to zero after the last event.
func benchWebhooks(ctx context.Context, args []string) error {
	fl := flag.NewFlagSet("webhooks", flag.ContinueOnError)
	rate := fl.Int("rate", 1000, "events per second (open loop)")
	dur := fl.Duration("duration", 10*time.Second, "how long to emit")
	writers := fl.Int("writers", 4, "concurrent emitting transactions")
	perTx := fl.Int("per-tx", 50, "events committed per transaction at most (what is queued when a writer is free)")
	backlog := fl.Int("backlog", 10000, "then commit this many events at once (500 per transaction) and time their delivery: the capacity, not the offered rate (0: skip)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	b, err := openBackend(ctx)
	if err != nil {
		return err
	}
	defer b.close()
	var received atomic.Int64
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		received.Add(1)
	}))
	defer recv.Close()
	_, stop, err := startBenchServer(ctx, b, map[string]string{"SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE": "true", "SWITCHBOARD_WEBHOOK_ALLOW_HTTP": "true"})
	if err != nil {
		return err
	}
	defer stop()
	reg := b.st.Registry()
	tenant := fmt.Sprintf("hooks%d", time.Now().UnixNano()%1000000)
	if _, err := b.st.Create(ctx, reg.Resource("tenants"), models.Owner{}, map[string]any{"tenant": tenant, "callerid": "+27110000000"}); err != nil {
		return fmt.Errorf("seed tenant: %w", err)
	}
	o, err := b.st.Tenant(ctx, tenant)
	if err != nil {
		return err
	}
	hook, err := b.st.Create(ctx, reg.Resource("outbound_webhooks"), o, map[string]any{"name": "bench", "url": recv.URL + "/hook", "events": []any{"chat.message"}})
	if err != nil {
		return fmt.Errorf("seed webhook: %w", err)
	}
	time.Sleep(500 * time.Millisecond) // the webhook's own change goes by first
	base := received.Load()

	depth := func() (int64, int64) {
		d, _ := b.st.OutboxDepth(ctx, []string{"webhooks"})
		var pending int64
		_ = b.st.Querier().GetContext(ctx, &pending, "SELECT COUNT(*) FROM webhook_deliveries WHERE hook_kind = 'outbound_webhooks' AND hook_id = ? AND status = 'pending'", hook["id"])
		return d, pending
	}
	// Open loop: each tick's events are emitted by a pool of writers, so a
	// slow commit does not slow the offered rate down.
	var emitted, failed atomic.Int64
	work := make(chan int, *rate*2)
	var wg sync.WaitGroup
	for range *writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				// Take what else is queued, up to -per-tx, into the same
				// transaction: the outbox sequence row serialises commits,
				// so one event per transaction bounds the offered rate.
				evs := make([]changes.Change, 0, *perTx)
				add := func(i int) {
					ev, err := models.NewEvent("chat.message", tenant, "bench", map[string]any{"channel": "bench", "from_name": "sbbench", "body": fmt.Sprintf("event %d", i)})
					if err != nil {
						failed.Add(1)
						return
					}
					evs = append(evs, ev)
				}
				add(i)
			more:
				for len(evs) < *perTx {
					select {
					case j, ok := <-work:
						if !ok {
							break more
						}
						add(j)
					default:
						break more
					}
				}
				if err := b.st.Emit(ctx, evs...); err != nil {
					failed.Add(int64(len(evs)))
					continue
				}
				emitted.Add(int64(len(evs)))
			}
		}()
	}
	start := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	perTick := max(*rate/100, 1)
	next, maxDepth, maxPending := 0, int64(0), int64(0)
	lastReport := start
	for time.Since(start) < *dur && ctx.Err() == nil {
		<-tick.C
		for range perTick {
			work <- next
			next++
		}
		if time.Since(lastReport) >= time.Second {
			lastReport = time.Now()
			d, p := depth()
			maxDepth, maxPending = max(maxDepth, d), max(maxPending, p)
			fmt.Printf("  t=%4.1fs emitted %6d delivered %6d outbox depth %5d pending deliveries %5d\n", time.Since(start).Seconds(), emitted.Load(), received.Load()-base, d, p)
		}
	}
	tick.Stop()
	close(work)
	wg.Wait()
	emitEnd := time.Now()
	total := emitted.Load()
	for ctx.Err() == nil {
		d, p := depth()
		if d == 0 && p == 0 && received.Load()-base >= total {
			break
		}
		if time.Since(emitEnd) > 2*time.Minute {
			return fmt.Errorf("not drained two minutes after the last event: depth %d, pending %d, delivered %d of %d", d, p, received.Load()-base, total)
		}
		time.Sleep(10 * time.Millisecond)
	}
	drained := time.Since(emitEnd)
	all := time.Since(start)
	fmt.Printf("webhooks: %d events offered at %d/s for %.1fs, committed to the outbox (at most %d per transaction) in %.1fs (%.0f/s) on %s (%d emit errors); %d delivered to a local receiver\n",
		total, *rate, dur.Seconds(), *perTx, emitEnd.Sub(start).Seconds(), float64(total)/emitEnd.Sub(start).Seconds(), b.name, failed.Load(), received.Load()-base)
	fmt.Printf("  delivered %.0f events/s overall; outbox depth max %d, pending deliveries max %d; both back to 0 %.2fs after the last event\n",
		float64(received.Load()-base)/all.Seconds(), maxDepth, maxPending, drained.Seconds())
	if *backlog <= 0 {
		return nil
	}

	// Capacity: a backlog committed faster than it can be delivered, so
	// what the receiver sees per second is what delivery can do.
	base = received.Load()
	start = time.Now()
	for i := 0; i < *backlog; i += 500 {
		evs := make([]changes.Change, 0, 500)
		for j := i; j < min(i+500, *backlog); j++ {
			ev, err := models.NewEvent("chat.message", tenant, "bench", map[string]any{"channel": "bench", "from_name": "sbbench", "body": fmt.Sprintf("backlog %d", j)})
			if err != nil {
				return err
			}
			evs = append(evs, ev)
		}
		if err := b.st.Emit(ctx, evs...); err != nil {
			return fmt.Errorf("commit the backlog: %w", err)
		}
	}
	committed := time.Since(start)
	d0, _ := depth()
	maxDepth, maxPending = 0, 0
	for ctx.Err() == nil {
		d, p := depth()
		maxDepth, maxPending = max(maxDepth, d), max(maxPending, p)
		if d == 0 && p == 0 && received.Load()-base >= int64(*backlog) {
			break
		}
		if time.Since(start) > 5*time.Minute {
			return fmt.Errorf("backlog not drained in five minutes: depth %d, pending %d, delivered %d of %d", d, p, received.Load()-base, *backlog)
		}
		time.Sleep(10 * time.Millisecond)
	}
	took := time.Since(start)
	fmt.Printf("webhooks capacity: a backlog of %d events committed in %.2fs (outbox depth %d when committed), all delivered %.2fs after the first commit: %.0f events/s; depth and pending deliveries back to 0 (pending max %d)\n",
		*backlog, committed.Seconds(), d0, took.Seconds(), float64(received.Load()-base)/took.Seconds(), maxPending)
	return nil
}

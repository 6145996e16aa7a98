package esl

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// source tells which connection an event came from.
type source int

const (
	fromEvents  source = iota // the lease-holding event connection
	fromCommand               // the command connection (BACKGROUND_JOB only)
)

type jobState struct {
	delivered bool
	at        time.Time
}

// dispatcher hands one node's events to OnEvent from a single goroutine.
// eslgo calls each listener in a new goroutine, so events can overtake each
// other; the dispatcher holds them for a short window and releases them in
// Event-Sequence order. It also makes sure a BACKGROUND_JOB reaches OnEvent
// once even when both connections carry it.
type dispatcher struct {
	onEvent func(Event)
	window  time.Duration
	in      chan queued
	paused  atomic.Bool
	wake    chan struct{}

	mu   sync.Mutex
	jobs map[string]jobState
	n    atomic.Uint64 // arrival counter
}

type queued struct {
	ev  Event
	seq uint64
	n   uint64 // arrival order, the tie breaker
	at  time.Time
}

func newDispatcher(onEvent func(Event), window time.Duration) *dispatcher {
	return &dispatcher{
		onEvent: onEvent,
		window:  window,
		in:      make(chan queued, 1024),
		wake:    make(chan struct{}, 1),
		jobs:    make(map[string]jobState),
	}
}

// expectJob records a Job-UUID this replica sent, so its BACKGROUND_JOB is
// taken from the command connection even without the event lease.
func (d *dispatcher) expectJob(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	if len(d.jobs) > 1000 {
		for k, j := range d.jobs {
			if now.Sub(j.at) > 10*time.Minute {
				delete(d.jobs, k)
			}
		}
	}
	d.jobs[id] = jobState{at: now}
}

func (d *dispatcher) forgetJob(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.jobs, id)
}

// accept decides whether ev from src goes to OnEvent.
func (d *dispatcher) accept(ev Event, src source) bool {
	isJob := ev.Name() == "BACKGROUND_JOB"
	if src == fromCommand && !isJob {
		return false
	}
	if !isJob {
		return true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	id := ev.Get("Job-UUID")
	j, ours := d.jobs[id]
	switch {
	case ours && j.delivered:
		return false
	case ours:
		d.jobs[id] = jobState{delivered: true, at: j.at}
		return true
	default:
		// Another replica's job: only the event connection reports it.
		return src == fromEvents
	}
}

// push queues an event; it blocks when 1024 events are waiting.
func (d *dispatcher) push(ctx context.Context, ev Event, src source) {
	if d.onEvent == nil || !d.accept(ev, src) {
		return
	}
	q := queued{ev: ev, seq: ev.Sequence(), n: d.n.Add(1), at: time.Now()}
	select {
	case d.in <- q:
	case <-ctx.Done():
	}
}

// pause holds events back (while OnConnect resyncs); resume releases them.
func (d *dispatcher) pause() { d.paused.Store(true) }

func (d *dispatcher) resume() {
	d.paused.Store(false)
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *dispatcher) run(ctx context.Context) {
	var w window
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case q := <-d.in:
			w.insert(q)
			// Take what else is already queued before releasing, so a
			// burst costs one pass over the window, not one per event.
		drain:
			for range cap(d.in) {
				select {
				case q := <-d.in:
					w.insert(q)
				default:
					break drain
				}
			}
		case <-timer.C:
		case <-d.wake:
		}
		if d.paused.Load() {
			continue
		}
		now := time.Now()
		for w.len() > 0 && now.Sub(w.first().at) >= d.window {
			d.onEvent(w.pop().ev)
		}
		if w.len() > 0 {
			timer.Reset(w.first().at.Add(d.window).Sub(now))
		}
	}
}

// window holds the queued events sorted by Event-Sequence, then arrival.
// Events nearly always arrive in order, so an insert is usually an append
// and a release takes the first element: no heap and no boxing per event.
type window struct {
	q    []queued
	head int // q[head:] are the events held
}

func (w *window) len() int       { return len(w.q) - w.head }
func (w *window) first() *queued { return &w.q[w.head] }

// before reports whether a goes before b.
func before(a, b *queued) bool {
	if a.seq != b.seq {
		return a.seq < b.seq
	}
	return a.n < b.n
}

// insert adds q after every held event that goes before it.
func (w *window) insert(q queued) {
	if w.head > 0 && w.head == len(w.q) {
		w.q, w.head = w.q[:0], 0
	}
	if w.head > 0 && len(w.q) == cap(w.q) && w.head >= len(w.q)/2 {
		// Reuse the released front instead of growing.
		n := copy(w.q, w.q[w.head:])
		clear(w.q[n:])
		w.q, w.head = w.q[:n], 0
	}
	i := len(w.q)
	w.q = append(w.q, q)
	for i > w.head && before(&q, &w.q[i-1]) {
		w.q[i] = w.q[i-1]
		i--
	}
	w.q[i] = q
}

// pop removes and returns the first event.
func (w *window) pop() queued {
	q := w.q[w.head]
	w.q[w.head] = queued{} // drop the reference to the headers
	w.head++
	return q
}

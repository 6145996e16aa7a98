package esl

import (
	"container/heap"
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
	n    uint64
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
	d.mu.Lock()
	d.n++
	q := queued{ev: ev, seq: ev.Sequence(), n: d.n, at: time.Now()}
	d.mu.Unlock()
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
	var h eventHeap
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case q := <-d.in:
			heap.Push(&h, q)
		case <-timer.C:
		case <-d.wake:
		}
		if d.paused.Load() {
			continue
		}
		now := time.Now()
		for h.Len() > 0 && now.Sub(h[0].at) >= d.window {
			d.onEvent(heap.Pop(&h).(queued).ev)
		}
		if h.Len() > 0 {
			timer.Reset(h[0].at.Add(d.window).Sub(now))
		}
	}
}

// eventHeap orders queued events by Event-Sequence, then arrival.
type eventHeap []queued

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].seq != h[j].seq {
		return h[i].seq < h[j].seq
	}
	return h[i].n < h[j].n
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(queued)) }
func (h *eventHeap) Pop() any {
	old := *h
	q := old[len(old)-1]
	*h = old[:len(old)-1]
	return q
}

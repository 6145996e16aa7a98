package esl

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
)

// fastOptions are pool options scaled down so tests run in milliseconds.
func fastOptions() PoolOptions {
	return PoolOptions{
		BackoffBase:    20 * time.Millisecond,
		BackoffMax:     200 * time.Millisecond,
		DialTimeout:    2 * time.Second,
		HealthInterval: 100 * time.Millisecond,
		HealthTimeout:  time.Second,
	}
}

func startFake(t *testing.T, opts fakefs.Options) *fakefs.Server {
	t.Helper()
	s := fakefs.New(opts)
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// startPool runs a pool until the test ends or stop is called.
func startPool(t *testing.T, nodes []NodeConfig, opts PoolOptions) (*Pool, func()) {
	t.Helper()
	p := NewPool(nodes, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		_ = p.Run(ctx)
		close(done)
	}()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Error("pool Run did not return after cancel")
			}
		})
	}
	t.Cleanup(stop)
	return p, stop
}

func nodeFor(s *fakefs.Server) NodeConfig {
	return NodeConfig{Name: "fs1", Addr: s.Addr(), Password: "ClueCon"}
}

func nodeUp(p *Pool, held bool) func() bool {
	return func() bool {
		st := p.Nodes()[0]
		return st.Up && st.EventsHeld == held
	}
}

// sink records what OnEvent receives.
type sink struct {
	mu     sync.Mutex
	events []Event
}

func (s *sink) add(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, e)
}

func (s *sink) all() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.events...)
}

func (s *sink) count(pred func(Event) bool) int {
	n := 0
	for _, e := range s.all() {
		if pred(e) {
			n++
		}
	}
	return n
}

// counter counts OnConnect calls.
type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) inc(context.Context, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
}

func (c *counter) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// freeAddr returns an address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// fullSubscribers counts the fake's connections subscribed to the pool's
// event list (as opposed to command connections, which take only
// BACKGROUND_JOB).
func fullSubscribers(s *fakefs.Server) int {
	n := 0
	for _, c := range s.Conns() {
		if len(c.Events) > 1 {
			n++
		}
	}
	return n
}

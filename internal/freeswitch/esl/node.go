package esl

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/percipia/eslgo"

	"github.com/switchboard/switchboard/internal/platform/backoff"
)

// node is one FreeSWITCH node's connections and state.
type node struct {
	cfg  NodeConfig
	p    *Pool
	log  *slog.Logger
	disp *dispatcher
	sem  chan struct{}      // one command at a time on the command connection
	stop context.CancelFunc // ends this node's loops (SetNodes); set by start
	// lastEvent is the unix nanoseconds of the last event received.
	lastEvent atomic.Int64

	mu         sync.Mutex
	cmd        *link // nil while down
	up         bool
	since      time.Time
	eventsHeld bool
	cmdUp      chan struct{} // closed while cmd is up; replaced when it drops
}

func (n *node) status() NodeStatus {
	n.mu.Lock()
	defer n.mu.Unlock()
	st := NodeStatus{Name: n.cfg.Name, Addr: n.cfg.Addr, Up: n.up, Since: n.since, EventsHeld: n.eventsHeld}
	if ns := n.lastEvent.Load(); ns > 0 {
		st.LastEvent = time.Unix(0, ns)
	}
	return st
}

// current returns the live command link, nil when down or failed.
func (n *node) current() *link {
	n.mu.Lock()
	l := n.cmd
	n.mu.Unlock()
	if l == nil || l.failed() {
		return nil
	}
	return l
}

func (n *node) setCommand(l *link) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cmd = l
	if up := l != nil; up != n.up || n.since.IsZero() {
		n.up, n.since = up, time.Now()
	}
	if n.cmdUp == nil {
		n.cmdUp = make(chan struct{})
	}
	select {
	case <-n.cmdUp: // closed: was up
		if l == nil {
			n.cmdUp = make(chan struct{})
		}
	default:
		if l != nil {
			close(n.cmdUp)
		}
	}
}

func (n *node) setEventsHeld(v bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.eventsHeld = v
}

// waitCommandUp waits, at most d, for the command connection, so that
// OnConnect can use API right away.
func (n *node) waitCommandUp(ctx context.Context, d time.Duration) {
	n.mu.Lock()
	if n.cmdUp == nil {
		n.cmdUp = make(chan struct{})
	}
	ch := n.cmdUp
	n.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
	}
}

// send writes one command on the command connection and returns its reply.
func (n *node) send(ctx context.Context, line string) (*eslgo.RawResponse, error) {
	op := verb(line)
	l := n.current()
	if l == nil {
		return nil, fmt.Errorf("esl %s %s: %w", n.cfg.Name, op, ErrNodeDown)
	}
	select {
	case n.sem <- struct{}{}:
	case <-l.done:
		return nil, fmt.Errorf("esl %s %s: %w", n.cfg.Name, op, ErrNodeDown)
	case <-ctx.Done():
		return nil, fmt.Errorf("esl %s %s: %w", n.cfg.Name, op, ctx.Err())
	}
	defer func() { <-n.sem }()
	if n.current() != l {
		return nil, fmt.Errorf("esl %s %s: %w", n.cfg.Name, op, ErrNodeDown)
	}
	r, err := l.sendCommand(ctx, line)
	if err != nil {
		// The reply, if it ever comes, would be taken as the next
		// command's: this connection is finished.
		l.fail()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("esl %s %s: %w", n.cfg.Name, op, ctx.Err())
		}
		return nil, fmt.Errorf("esl %s %s: %w (%v)", n.cfg.Name, op, ErrDisconnected, err)
	}
	return r, nil
}

// dial connects and authenticates within DialTimeout. eslgo's Dial has no
// deadline of its own, so it runs aside and is abandoned on timeout. The
// connection runs on its own context; the returned func cancels it (see
// release).
func (n *node) dial(ctx context.Context, onDisconnect func()) (*eslgo.Conn, context.CancelFunc, error) {
	cctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	opts := eslgo.DefaultInboundOptions
	opts.Context = cctx
	// On a read error (EOF included) eslgo logs before it tells its own
	// disconnect goroutine, which would then run eslgo's Close: cancelling
	// the context here first ends that goroutine, so eslgo never closes
	// by itself (see release).
	opts.Logger = eslLogger{l: n.log, onReadError: func() { stop(); onDisconnect() }}
	opts.Password = n.cfg.Password
	opts.OnDisconnect = onDisconnect
	opts.AuthTimeout = n.p.opts.DialTimeout
	opts.ExitTimeout = time.Second
	type result struct {
		c   *eslgo.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		c, err := opts.Dial(n.cfg.Addr)
		ch <- result{c, err}
	}()
	t := time.NewTimer(n.p.opts.DialTimeout)
	defer t.Stop()
	abandon := func() {
		go func() {
			if r := <-ch; r.c != nil {
				release(r.c, stop)
				return
			}
			stop()
		}()
	}
	select {
	case r := <-ch:
		if r.err != nil {
			stop()
			return nil, nil, fmt.Errorf("dial esl %s: %w", n.cfg.Addr, r.err)
		}
		return r.c, stop, nil
	case <-t.C:
		abandon()
		return nil, nil, fmt.Errorf("dial esl %s: timed out after %s", n.cfg.Addr, n.p.opts.DialTimeout)
	case <-ctx.Done():
		abandon()
		return nil, nil, fmt.Errorf("dial esl %s: %w", n.cfg.Addr, ctx.Err())
	}
}

// connect dials and returns a link whose done closes on disconnect.
func (n *node) connect(ctx context.Context) (*link, error) {
	l := &link{done: make(chan struct{})}
	c, stop, err := n.dial(ctx, l.fail)
	if err != nil {
		return nil, err
	}
	l.c, l.stop = c, stop
	return l, nil
}

func (n *node) subscribe(ctx context.Context, l *link, line string) error {
	sctx, cancel := context.WithTimeout(ctx, n.p.opts.HealthTimeout)
	defer cancel()
	r, err := l.sendCommand(sctx, line)
	if err != nil {
		return fmt.Errorf("subscribe esl %s: %w", n.cfg.Name, err)
	}
	if !r.IsOk() {
		return &CommandError{Node: n.cfg.Name, Command: line, Reply: r.GetReply()}
	}
	return nil
}

// commandLoop keeps the command connection up until ctx ends.
func (n *node) commandLoop(ctx context.Context) {
	log := n.log.With("conn", "command")
	for attempt := 0; ctx.Err() == nil; {
		log.Debug("esl connecting")
		l, err := n.connect(ctx)
		if err == nil {
			l.c.RegisterEventListener(eslgo.EventListenAll, func(e *eslgo.Event) {
				n.disp.push(ctx, convert(n.cfg.Name, e), fromCommand)
			})
			if err = n.subscribe(ctx, l, "event plain BACKGROUND_JOB"); err != nil {
				l.close()
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			n.setCommand(nil)
			d := n.p.backoff(attempt)
			attempt++
			log.Warn("esl connect failed", "err", err, "backoff", d)
			if !sleep(ctx, d) {
				break
			}
			continue
		}
		attempt = 0
		n.setCommand(l)
		log.Info("esl connected")
		err = n.watch(ctx, l, n.sem)
		n.setCommand(nil)
		l.close()
		if ctx.Err() != nil {
			break
		}
		log.Warn("esl disconnected", "err", err)
	}
	n.setCommand(nil)
}

// watch blocks until the link dies, a probe fails or ctx ends. With sem
// set, a probe skips its tick while a command holds sem: that command's own
// timeout tears a dead connection down.
func (n *node) watch(ctx context.Context, l *link, sem chan struct{}) error {
	health := time.NewTicker(n.p.opts.HealthInterval)
	defer health.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-l.done:
			return ErrDisconnected
		case <-health.C:
			if sem != nil {
				select {
				case sem <- struct{}{}:
				default:
					continue
				}
			}
			err := n.probe(ctx, l)
			if sem != nil {
				<-sem
			}
			if err != nil {
				return err
			}
		}
	}
}

func (n *node) probe(ctx context.Context, l *link) error {
	pctx, cancel := context.WithTimeout(ctx, n.p.opts.HealthTimeout)
	defer cancel()
	if _, err := l.sendCommand(pctx, "api status"); err != nil {
		l.fail()
		return fmt.Errorf("health check: %w", err)
	}
	return nil
}

// backoff returns the delay before reconnect attempt n (0 first):
// base·2ⁿ capped at max, jittered (backoff.Delay).
func (p *Pool) backoff(attempt int) time.Duration {
	return backoff.Delay(p.opts.BackoffBase, p.opts.BackoffMax, attempt+1)
}

func randN(n int64) int64 { return rand.Int64N(n + 1) }

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// convert turns an eslgo event into an Event with URL-decoded values
// (first value of a repeated header).
func convert(node string, e *eslgo.Event) Event {
	// eslgo reads headers with textproto.Reader.ReadMIMEHeader, so the names
	// are already canonical: one map, filled directly, instead of NewEvent's
	// second canonicalising copy.
	h := make(map[string]string, len(e.Headers))
	for k, vs := range e.Headers {
		if len(vs) == 0 {
			continue
		}
		v := vs[0]
		if strings.IndexByte(v, '%') >= 0 {
			if u, err := url.PathUnescape(v); err == nil {
				v = u
			}
		}
		h[k] = v
	}
	return Event{Node: node, Headers: h, Body: string(e.Body)}
}

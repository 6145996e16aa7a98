package fakefs

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/textproto"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/percipia/eslgo"
	"github.com/percipia/eslgo/command"
)

func startFake(t *testing.T, opts Options) *Server {
	t.Helper()
	s := New(opts)
	if err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// rawClient speaks ESL by hand, so tests can assert exact bytes and order.
type rawClient struct {
	t  *testing.T
	c  net.Conn
	r  *bufio.Reader
	tp *textproto.Reader
}

func dialRaw(t *testing.T, addr string) *rawClient {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	r := bufio.NewReader(c)
	return &rawClient{t: t, c: c, r: r, tp: textproto.NewReader(r)}
}

// dialAuthed is dialRaw followed by a successful auth.
func dialAuthed(t *testing.T, addr string) *rawClient {
	t.Helper()
	rc := dialRaw(t, addr)
	rc.auth()
	return rc
}

// dialListener is an authenticated connection subscribed to events
// ("CUSTOM limit::usage"), as a client of the event socket opens one.
func dialListener(t *testing.T, addr, events string) *rawClient {
	t.Helper()
	rc := dialAuthed(t, addr)
	if r := rc.command("event plain " + events); r != "+OK event listener enabled plain" {
		t.Fatalf("event plain %s: %q", events, r)
	}
	return rc
}

func (rc *rawClient) send(s string) {
	rc.t.Helper()
	if _, err := rc.c.Write([]byte(s)); err != nil {
		rc.t.Fatal(err)
	}
}

// readN reads exactly n bytes.
func (rc *rawClient) readN(n int) string {
	rc.t.Helper()
	_ = rc.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b := make([]byte, n)
	if _, err := io.ReadFull(rc.r, b); err != nil {
		rc.t.Fatalf("read %d bytes: %v", n, err)
	}
	return string(b)
}

// frame reads one message: headers and Content-Length body.
func (rc *rawClient) frame() (textproto.MIMEHeader, string) {
	rc.t.Helper()
	_ = rc.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	h, err := rc.tp.ReadMIMEHeader()
	if err != nil {
		rc.t.Fatalf("read frame: %v", err)
	}
	var body string
	if n, err := strconv.Atoi(h.Get("Content-Length")); err == nil {
		b := make([]byte, n)
		if _, err := io.ReadFull(rc.r, b); err != nil {
			rc.t.Fatalf("read body: %v", err)
		}
		body = string(b)
	}
	return h, body
}

// event reads the next frame and parses it as a plain event.
func (rc *rawClient) event() (textproto.MIMEHeader, string) {
	rc.t.Helper()
	h, body := rc.frame()
	if ct := h.Get("Content-Type"); ct != "text/event-plain" {
		rc.t.Fatalf("Content-Type = %q, want text/event-plain", ct)
	}
	r := bufio.NewReader(strings.NewReader(body))
	eh, err := textproto.NewReader(r).ReadMIMEHeader()
	if err != nil {
		rc.t.Fatalf("parse event: %v", err)
	}
	var eb string
	if n, err := strconv.Atoi(eh.Get("Content-Length")); err == nil {
		b := make([]byte, n)
		if _, err := io.ReadFull(r, b); err != nil {
			rc.t.Fatalf("event body: %v", err)
		}
		eb = string(b)
	}
	return eh, eb
}

func (rc *rawClient) auth() {
	rc.t.Helper()
	rc.frame()
	rc.send("auth ClueCon\n\n")
	if h, _ := rc.frame(); h.Get("Reply-Text") != "+OK accepted" {
		rc.t.Fatalf("auth reply %q", h.Get("Reply-Text"))
	}
}

func (rc *rawClient) command(cmd string) string {
	rc.t.Helper()
	rc.send(cmd + "\n\n")
	h, _ := rc.frame()
	return h.Get("Reply-Text")
}

func (rc *rawClient) api(cmd string) string {
	rc.t.Helper()
	rc.send("api " + cmd + "\n\n")
	h, body := rc.frame()
	if h.Get("Content-Type") != "api/response" {
		rc.t.Fatalf("api reply Content-Type %q", h.Get("Content-Type"))
	}
	return body
}

// dialESL connects a real eslgo client.
func dialESL(t *testing.T, addr, password string, onDisconnect func()) (*eslgo.Conn, error) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	opts := eslgo.DefaultInboundOptions
	opts.Context = ctx
	opts.Logger = eslgo.NilLogger{}
	opts.Password = password
	opts.OnDisconnect = onDisconnect
	opts.AuthTimeout = 2 * time.Second
	opts.ExitTimeout = 200 * time.Millisecond
	c, err := opts.Dial(addr)
	if err != nil {
		stop()
		return nil, err
	}
	// Not eslgo's Close, which races its own readers (see esl.release):
	// end its goroutines, then ask the server to hang up.
	t.Cleanup(func() {
		stop()
		ectx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		_, _ = c.SendCommand(ectx, command.Exit{})
	})
	return c, nil
}

func mustESL(t *testing.T, addr string) *eslgo.Conn {
	t.Helper()
	c, err := dialESL(t, addr, "ClueCon", nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func eslAPI(t *testing.T, c *eslgo.Conn, cmd, args string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	r, err := c.SendCommand(ctx, command.API{Command: cmd, Arguments: args})
	if err != nil {
		t.Fatalf("api %s %s: %v", cmd, args, err)
	}
	return string(r.Body)
}

// collector gathers events from an eslgo listener. eslgo calls listeners in
// goroutines, so events are sorted by Event-Sequence before use.
type collector struct {
	mu     sync.Mutex
	events []*eslgo.Event
	notify chan struct{}
}

func newCollector(c *eslgo.Conn) *collector {
	col := &collector{notify: make(chan struct{}, 1)}
	c.RegisterEventListener(eslgo.EventListenAll, func(e *eslgo.Event) {
		col.mu.Lock()
		col.events = append(col.events, e)
		col.mu.Unlock()
		select {
		case col.notify <- struct{}{}:
		default:
		}
	})
	return col
}

// waitN waits until at least n events arrived and returns them sorted.
func (col *collector) waitN(t *testing.T, n int) []*eslgo.Event {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		col.mu.Lock()
		if len(col.events) >= n {
			out := append([]*eslgo.Event(nil), col.events...)
			col.mu.Unlock()
			sort.Slice(out, func(i, j int) bool { return seqOf(out[i]) < seqOf(out[j]) })
			return out
		}
		got := len(col.events)
		col.mu.Unlock()
		select {
		case <-col.notify:
		case <-deadline:
			t.Fatalf("got %d events, want %d", got, n)
		}
	}
}

func seqOf(e *eslgo.Event) int {
	n, _ := strconv.Atoi(e.GetHeader("Event-Sequence"))
	return n
}

func subscribe(t *testing.T, c *eslgo.Conn, names ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	r, err := c.SendCommand(ctx, command.Event{Format: "plain", Listen: names})
	if err != nil || r.GetReply() != "+OK event listener enabled plain" {
		t.Fatalf("subscribe: %v %q", err, r.GetReply())
	}
}

package routes

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/freeswitch/calls"
)

// streamLimiter caps the event streams one API key holds open on this
// replica.
type streamLimiter struct {
	max  int
	mu   sync.Mutex
	open map[string]int
}

func (l *streamLimiter) acquire(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[key] >= l.max {
		return false
	}
	l.open[key]++
	return true
}

func (l *streamLimiter) release(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[key]--; l.open[key] <= 0 {
		delete(l.open, key)
	}
}

// streamOwner names the credential a stream counts against: the API key,
// else the administrator.
func streamOwner(p *Principal) string {
	if p.KeyScope != "" {
		return "key:" + p.KeyScope
	}
	return "user:" + p.Name
}

// events streams channel and call changes as Server-Sent Events: one
// "id: <stream id>", "event: <type>" message per change with the object as
// data, and a comment line every Heartbeat so proxies keep the connection
// and a vanished client is noticed (its write fails). A client that
// reconnects with Last-Event-ID (or ?last_event_id=) first gets the changes
// it missed that are still retained (an hour by default). Every stream of
// this replica is served from one Redis reader. The stream ends when the
// client goes away or the server shuts down.
func (r *callRoutes) events(c *fiber.Ctx) error {
	tenant := queryTenant(c)
	// EventSource always sends this Accept; a client that does not (a
	// generic HTTP client that would wait forever for the body) gets 406.
	if !strings.Contains(c.Get(fiber.HeaderAccept), "text/event-stream") {
		return newError(fiber.StatusNotAcceptable, "not_acceptable", "this endpoint streams text/event-stream; send Accept: text/event-stream")
	}
	last := strings.TrimSpace(c.Get("Last-Event-ID"))
	if last == "" {
		last = strings.Clone(c.Query("last_event_id"))
	}
	if last != "" && !calls.ValidStreamID(last) {
		return newError(fiber.StatusBadRequest, "bad_last_event_id", "Last-Event-ID must be an id this stream sent (like 1732470000000-0)")
	}
	owner := streamOwner(principal(c))
	if !r.streams.acquire(owner) {
		return newError(fiber.StatusTooManyRequests, "too_many_streams",
			fmt.Sprintf("this credential already has %d event streams open; close one first", r.streams.max))
	}
	// The request's context ends when this handler returns, before the
	// body is streamed, so the subscription lives on its own context.
	ctx, cancel := context.WithCancel(r.Streams)
	changes, unsubscribe, err := r.Tracker.Follow(ctx, tenant, last)
	if err != nil {
		cancel()
		r.streams.release(owner)
		return err
	}
	log := logger(c)
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set("X-Accel-Buffering", "no")
	watchHangUp(c, cancel)
	signedOut := r.watchSession(ctx, principal(c))
	heartbeat := r.Heartbeat
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		r.Metrics.SSEOpened()
		defer func() { cancel(); unsubscribe(); r.streams.release(owner); r.Metrics.SSEClosed() }()
		tick := time.NewTicker(heartbeat)
		defer tick.Stop()
		if _, err := fmt.Fprint(w, ": connected\n\n"); err != nil || w.Flush() != nil {
			return
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-signedOut:
				// Said before the end, so the page shows the sign-in at
				// once instead of reconnecting into a 401.
				_, _ = fmt.Fprint(w, "event: session.ended\ndata: {\"error\":\"the session ended: sign in again\",\"code\":\"unauthorized\"}\n\n")
				_ = w.Flush()
				return
			case <-tick.C:
				if _, err := fmt.Fprint(w, ": heartbeat\n\n"); err != nil {
					return
				}
			case ev, ok := <-changes:
				if !ok {
					return
				}
				data, err := json.Marshal(ev.Change)
				if err != nil {
					log.Warn("encode change", "error", err)
					continue
				}
				if _, err := fmt.Fprintf(w, "id: %s\nevent: %s\ndata: %s\n\n", ev.ID, ev.Change.Type, data); err != nil {
					return
				}
			}
			if err := w.Flush(); err != nil {
				return
			}
		}
	})
	return nil
}

// watchSession closes the returned channel when the browser session a
// stream was opened with ends (sign-out, revocation, expiry), checking every
// SessionCheck until ctx ends; a stream of an API key is not watched (nil
// channel). A signed-out browser must not go on receiving live calls.
func (r *callRoutes) watchSession(ctx context.Context, p *Principal) <-chan struct{} {
	if p == nil || p.signedIn == nil {
		return nil
	}
	ended := make(chan struct{})
	go func() {
		tick := time.NewTicker(r.SessionCheck)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			check, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := p.signedIn(check)
			cancel()
			if errors.Is(err, errNoSession) {
				close(ended)
				return
			}
		}
	}()
	return ended
}

// watchHangUp cancels a stream as soon as its client closes the
// connection, so the stream's slot (streamLimiter) is free at once rather
// than at the next heartbeat's failed write. An event-stream client sends
// nothing after its request, so a read on the connection only returns when
// it is closed. The connection is not reused after the stream (Connection:
// close), which also ends this read when the stream ends on the server's
// side.
func watchHangUp(c *fiber.Ctx, cancel context.CancelFunc) {
	c.Context().SetConnectionClose()
	conn := c.Context().Conn()
	if conn == nil {
		return
	}
	// The server's read timeout covers reading the request, not a stream.
	if err := conn.SetReadDeadline(time.Time{}); err != nil {
		return
	}
	go func() {
		defer cancel()
		var buf [512]byte
		for {
			if _, err := conn.Read(buf[:]); err != nil {
				return
			}
		}
	}()
}

package routes

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
)

// events streams channel changes as Server-Sent Events: one "event:
// <type>" message per change with the channel as data, and a comment line
// every Heartbeat so proxies keep the connection and a vanished client is
// noticed (its write fails). The stream ends when the client goes away or
// the server shuts down.
func (r *callRoutes) events(c *fiber.Ctx) error {
	tenant := queryTenant(c)
	// EventSource always sends this Accept; a client that does not (a
	// generic HTTP client that would wait forever for the body) gets 406.
	if !strings.Contains(c.Get(fiber.HeaderAccept), "text/event-stream") {
		return newError(fiber.StatusNotAcceptable, "not_acceptable", "this endpoint streams text/event-stream; send Accept: text/event-stream")
	}
	// The request's context ends when this handler returns, before the
	// body is streamed, so the subscription lives on its own context.
	ctx, cancel := context.WithCancel(r.Streams)
	changes, unsubscribe := r.Tracker.Subscribe(ctx, tenant)
	log := logger(c)
	c.Set(fiber.HeaderContentType, "text/event-stream")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set(fiber.HeaderConnection, "keep-alive")
	c.Set("X-Accel-Buffering", "no")
	heartbeat := r.Heartbeat
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		r.Metrics.SSEOpened()
		defer func() { cancel(); unsubscribe(); r.Metrics.SSEClosed() }()
		tick := time.NewTicker(heartbeat)
		defer tick.Stop()
		if _, err := fmt.Fprint(w, ": connected\n\n"); err != nil || w.Flush() != nil {
			return
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if _, err := fmt.Fprint(w, ": heartbeat\n\n"); err != nil {
					return
				}
			case ch, ok := <-changes:
				if !ok {
					return
				}
				data, err := json.Marshal(ch)
				if err != nil {
					log.Warn("encode channel change", "error", err)
					continue
				}
				if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ch.Type, data); err != nil {
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

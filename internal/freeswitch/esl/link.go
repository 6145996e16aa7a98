package esl

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/percipia/eslgo"
)

// link is one live eslgo connection and the signal that it is gone.
type link struct {
	c *eslgo.Conn
	// stop cancels the connection's own context (eslgo's Options.Context):
	// it ends eslgo's goroutines without eslgo's Close (see release).
	stop context.CancelFunc
	done chan struct{}
	once sync.Once
}

// fail marks the link dead: eslgo's OnDisconnect, a failed probe, or a
// command whose reply can no longer be matched.
func (l *link) fail() { l.once.Do(func() { close(l.done) }) }

func (l *link) failed() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

// close marks the link dead and releases the connection in the background
// (the exit may wait for a reply nobody reads, which must not delay
// reconnects).
func (l *link) close() {
	l.fail()
	go release(l.c, l.stop)
}

// exitTimeout bounds the "exit" that asks FreeSWITCH to close a released
// connection.
const exitTimeout = time.Second

// release ends an eslgo connection without eslgo's Close. In eslgo v1.5.2,
// Close deletes from the connection's response-channel map while its auth
// and disconnect goroutines read that map without the lock: a data race
// whenever Close runs concurrently with them. Instead the connection's
// context is cancelled first, which ends all of eslgo's goroutines (the
// waiting ones return at once; the reader after its current frame) and
// keeps eslgo from ever running Close itself (its disconnect goroutine is
// gone before FreeSWITCH's disconnect notice can reach it); then "exit"
// asks FreeSWITCH to close the socket. A peer that never answers leaves the
// socket to TCP keepalive and the garbage collector.
func release(c *eslgo.Conn, stop context.CancelFunc) {
	stop()
	ctx, cancel := context.WithTimeout(context.Background(), exitTimeout)
	defer cancel()
	_, _ = c.SendCommand(ctx, rawCommand("exit"))
}

// sendCommand is SendCommand cut short when the link fails. eslgo cannot
// end a pending SendCommand itself on a drop: its close waits for the lock
// that SendCommand holds until the ctx ends.
func (l *link) sendCommand(ctx context.Context, line string) (*eslgo.RawResponse, error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-l.done:
			cancel()
		case <-stop:
		}
	}()
	return l.c.SendCommand(sctx, rawCommand(line))
}

// rawCommand is a command line sent as written (eslgo adds the blank line).
type rawCommand string

func (r rawCommand) BuildMessage() string { return string(r) }

// eslLogger sends eslgo's printf-style logs to slog. eslgo warns about every
// EOF, which the pool already logs as a disconnect, so its Debug, Info and
// Warn go to Debug and only its Error to Warn.
//
// It is also the only prompt signal that eslgo's reader has stopped: on any
// read error (EOF, reset, or a Content-Type it has no channel for) eslgo
// logs "Error receiving message" and never reads again, so onReadError
// marks the connection dead at once.
type eslLogger struct {
	l           *slog.Logger
	onReadError func()
}

func (e eslLogger) Debug(f string, a ...any) { e.l.Debug(msg(f, a), "source", "eslgo") }
func (e eslLogger) Info(f string, a ...any)  { e.l.Debug(msg(f, a), "source", "eslgo") }
func (e eslLogger) Error(f string, a ...any) { e.l.Warn(msg(f, a), "source", "eslgo") }

func (e eslLogger) Warn(f string, a ...any) {
	e.l.Debug(msg(f, a), "source", "eslgo")
	if strings.HasPrefix(f, "Error receiving message") && e.onReadError != nil {
		e.onReadError()
	}
}

func msg(f string, a []any) string { return strings.TrimSpace(fmt.Sprintf(f, a...)) }

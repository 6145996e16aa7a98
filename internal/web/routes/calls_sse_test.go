package routes_test

import (
	"bufio"
	"context"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
)

// readMessage returns the next SSE message's id, event and data.
func readMessage(t *testing.T, rd *bufio.Reader) (id, event, data string) {
	t.Helper()
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("stream ended: %v", err)
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		case line == "" && event != "":
			return id, event, data
		}
	}
}

// TestEventStreamResumesWithLastEventID: every event has an id; a client
// that reconnects with Last-Event-ID gets the change it missed first.
func TestEventStreamResumesWithLastEventID(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		rd, resp := openStream(t, e, e.tenantKey)
		first := e.createTenantChannel(t, "1001")
		id, event, data := readMessage(t, rd)
		if id == "" || event != "channel.created" || !strings.Contains(data, first) {
			t.Fatalf("first message id=%q event=%q data=%s", id, event, data)
		}
		resp.Body.Close()
		missed := e.createTenantChannel(t, "1002")
		e.waitChannel(t, missed)
		rd2, _ := openStream(t, e, e.tenantKey, "Last-Event-ID", id)
		id2, event2, data2 := readMessage(t, rd2)
		if id2 == "" || id2 == id || event2 != "channel.created" || !strings.Contains(data2, missed) {
			t.Fatalf("resumed with %s: id=%q event=%q data=%s", id, id2, event2, data2)
		}
		e.DoHeaders(t, "GET", "/api/telephony/events", map[string]string{"X-API-Key": e.tenantKey, "Accept": "text/event-stream", "Last-Event-ID": "nonsense"}, nil).Expect(t, 400)
	})
}

func (e *callEnv) createTenantChannel(t *testing.T, ext string) string {
	t.Helper()
	id, err := e.fs.CreateChannel(fakefs.ChannelSpec{CIDNum: ext, Dest: "5551234", Context: e.tenant,
		Vars: []fakefs.Header{{Name: "sb_tenant", Value: e.tenant}, {Name: "sb_ext", Value: ext}}})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestEventStreamsCappedPerKey: beyond SWITCHBOARD_SSE_STREAMS_PER_KEY open
// streams a key gets 429; another key is not affected.
func TestEventStreamsCappedPerKey(t *testing.T) {
	t.Parallel()
	for _, be := range apptest.Envs(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			fs := startFake(t)
			s := apptest.Start(t, be, map[string]string{"SWITCHBOARD_ESL_NODES": fs.Addr(), "SWITCHBOARD_SSE_STREAMS_PER_KEY": "2"})
			e := setupCallEnv(t, s, fs)
			_, r1 := openStream(t, e, e.tenantKey)
			openStream(t, e, e.tenantKey)
			over := e.DoHeaders(t, "GET", "/api/telephony/events", map[string]string{"X-API-Key": e.tenantKey, "Accept": "text/event-stream"}, nil).Expect(t, 429)
			if m := over.Map(t); m["code"] != "too_many_streams" {
				t.Errorf("429 body %v", m)
			}
			openStream(t, e, e.KeyFor(t, map[string]any{"tenant": e.tenant})) // another key is not limited by this one's streams
			_ = r1
		})
	}
}

// TestClosedEventStreamFreesItsSlot: a client that closes one of its
// streams at the per-key cap can open another at once, not after the next
// heartbeat (15s) finds the connection gone.
func TestClosedEventStreamFreesItsSlot(t *testing.T) {
	t.Parallel()
	for _, be := range apptest.Envs(t) {
		t.Run(be.Name, func(t *testing.T) {
			t.Parallel()
			fs := startFake(t)
			s := apptest.Start(t, be, map[string]string{"SWITCHBOARD_ESL_NODES": fs.Addr(), "SWITCHBOARD_SSE_STREAMS_PER_KEY": "2"})
			e := setupCallEnv(t, s, fs)
			_, r1 := openStream(t, e, e.tenantKey)
			openStream(t, e, e.tenantKey)
			e.DoHeaders(t, "GET", "/api/telephony/events", map[string]string{"X-API-Key": e.tenantKey, "Accept": "text/event-stream"}, nil).Expect(t, 429)
			r1.Body.Close()
			// The server learns of the close asynchronously: retry while
			// it answers 429, well within the 15s heartbeat.
			deadline := time.Now().Add(5 * time.Second)
			for {
				ctx, cancel := context.WithCancel(t.Context())
				req, _ := http.NewRequestWithContext(ctx, "GET", e.URL+"/api/telephony/events", nil)
				req.Header.Set("X-API-Key", e.tenantKey)
				req.Header.Set("Accept", "text/event-stream")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					cancel()
					t.Fatal(err)
				}
				code := resp.StatusCode
				resp.Body.Close()
				cancel()
				if code == 200 {
					return
				}
				if code != 429 || time.Now().After(deadline) {
					t.Fatalf("after closing a stream: %d", code)
				}
				runtime.Gosched()
			}
		})
	}
}

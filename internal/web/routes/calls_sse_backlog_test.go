package routes_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/freeswitch/calls"
)

// TestEventStreamResumesOverLargeBacklog: with more retained changes than
// a stream's buffer (1,024), a resume from 0-0 answers and streams them
// all, and new streams still open and receive live changes.
func TestEventStreamResumesOverLargeBacklog(t *testing.T) {
	eachCallEnv(t, func(t *testing.T, e *callEnv) {
		rd, resp := openStream(t, e, e.tenantKey)
		e.createTenantChannel(t, "1001")
		id, _, _ := readMessage(t, rd)
		resp.Body.Close()
		key := changeStreamKey(t, e, id)
		const n = 1500
		pipe := e.Redis.Pipeline()
		for i := range n {
			msg, _ := json.Marshal(calls.Change{Type: calls.ChangeUpdated, Channel: calls.Channel{UUID: fmt.Sprintf("backlog-%d", i), Tenant: e.tenant}})
			pipe.XAdd(t.Context(), &redis.XAddArgs{Stream: key, Values: []any{"tenant", e.tenant, "msg", msg}})
		}
		if _, err := pipe.Exec(t.Context()); err != nil {
			t.Fatal(err)
		}
		resumed, _ := openStream(t, e, e.tenantKey, "Last-Event-ID", id)
		for i := 0; i < n; {
			_, _, data := readMessage(t, resumed)
			if !strings.Contains(data, `"backlog-`) {
				continue // a later change of channel 1001
			}
			if !strings.Contains(data, fmt.Sprintf(`"backlog-%d"`, i)) {
				t.Fatalf("replayed change %d: %s", i, data)
			}
			i++
		}
		live, _ := openStream(t, e, e.tenantKey)
		ch := e.createTenantChannel(t, "1002")
		waitFor(t, "new stream", live, ch)
		waitFor(t, "resumed stream after its replay", resumed, ch)
	})
}

// changeStreamKey finds the change stream holding the entry id.
func changeStreamKey(t *testing.T, e *callEnv, id string) string {
	t.Helper()
	iter := e.Redis.Scan(t.Context(), 0, "*stream", 1000).Iterator()
	for iter.Next(t.Context()) {
		k := iter.Val()
		if msgs, err := e.Redis.XRange(t.Context(), k, id, id).Result(); err == nil && len(msgs) == 1 {
			return k
		}
	}
	t.Fatalf("no change stream holds %s", id)
	return ""
}

// waitFor reads a stream until a change mentions want.
func waitFor(t *testing.T, who string, rd *bufio.Reader, want string) {
	t.Helper()
	for {
		if _, _, data := readMessage(t, rd); strings.Contains(data, want) {
			return
		}
	}
}

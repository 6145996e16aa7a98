package calls

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultStreamRetention is how long changes stay in the change stream for
// clients that reconnect with Last-Event-ID.
const DefaultStreamRetention = time.Hour

// maxBacklog bounds how many missed changes one resume replays.
const maxBacklog = 10000

// StreamEvent is one message of the change stream with its stream id
// (a Redis stream entry id, "<ms>-<n>"), which SSE sends as id:.
type StreamEvent struct {
	ID     string
	Change Change
}

var streamIDRe = regexp.MustCompile(`^[0-9]{1,20}-[0-9]{1,20}$`)

// ValidStreamID reports whether id can be a change-stream id.
func ValidStreamID(id string) bool { return streamIDRe.MatchString(id) }

func (t *Tracker) streamKey() string { return t.prefix + "stream" }

// streamMin is the oldest stream id kept at time now.
func (t *Tracker) streamMin(now time.Time) string {
	return strconv.FormatInt(now.Add(-t.opts.StreamRetention).UnixMilli(), 10) + "-0"
}

// addToStream appends a change (from Go; the apply script appends its own).
func (t *Tracker) addToStream(ctx context.Context, tenant string, msg []byte) error {
	return t.rdb.XAdd(ctx, &redis.XAddArgs{Stream: t.streamKey(), Values: []any{"tenant", tenant, "msg", msg}}).Err()
}

// TrimStream drops the changes older than Options.StreamRetention from the
// change stream (XTRIM MINID); call it periodically. Trimming apart from
// the appends keeps every event's script cheap.
func (t *Tracker) TrimStream(ctx context.Context) error {
	if err := t.rdb.XTrimMinIDApprox(ctx, t.streamKey(), t.streamMin(t.opts.Now()), 0).Err(); err != nil {
		return fmt.Errorf("trim change stream: %w", err)
	}
	return nil
}

// hub fans the change stream out to every subscriber of this replica from
// one reader: a single blocking XREAD loop (one Redis connection) however
// many event streams are open. It runs while anyone subscribes.
type hub struct {
	mu      sync.Mutex
	subs    map[*follower]struct{}
	running bool
	last    string // id of the last entry the reader took
}

type follower struct {
	tenant string
	out    chan StreamEvent
	// after is the id of the last event given (backlog included); older
	// ones from the live reader are skipped.
	after string
	dead  bool
}

// Follow streams the changes of one tenant ("" = all) with their stream
// ids. With lastID (a client's Last-Event-ID) it first replays what came
// after it that is still retained, then continues live with no gap and no
// duplicate. The channel closes when ctx ends or stop is called; a
// subscriber that does not keep up (1024 queued) is dropped (its channel
// closes) rather than stall the others.
func (t *Tracker) Follow(ctx context.Context, tenant, lastID string) (<-chan StreamEvent, func(), error) {
	if lastID != "" && !ValidStreamID(lastID) {
		return nil, nil, fmt.Errorf("follow changes: invalid stream id %q", lastID)
	}
	f := &follower{tenant: tenant, out: make(chan StreamEvent, 1024), after: lastID}
	h := &t.hub
	h.mu.Lock()
	if h.subs == nil {
		h.subs = map[*follower]struct{}{}
	}
	if !h.running {
		// Start from the stream's current end, so nothing published
		// after Follow returns is missed.
		last, err := t.streamEnd(ctx)
		if err != nil {
			h.mu.Unlock()
			return nil, nil, err
		}
		h.last, h.running = last, true
		go t.readStream()
	}
	if lastID != "" {
		// Backlog under the hub lock: the reader cannot deliver newer
		// entries to f before it.
		if err := t.backlog(ctx, f, h.last); err != nil {
			h.mu.Unlock()
			return nil, nil, err
		}
	} else {
		f.after = h.last
	}
	h.subs[f] = struct{}{}
	h.mu.Unlock()

	var once sync.Once
	stop := func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			if _, ok := h.subs[f]; ok {
				delete(h.subs, f)
				close(f.out)
			}
		})
	}
	context.AfterFunc(ctx, stop)
	return f.out, stop, nil
}

// streamEnd returns the id of the newest entry ("0-0" when empty).
func (t *Tracker) streamEnd(ctx context.Context) (string, error) {
	msgs, err := t.rdb.XRevRangeN(ctx, t.streamKey(), "+", "-", 1).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return "", fmt.Errorf("follow changes: %w", err)
	}
	if len(msgs) == 0 {
		return "0-0", nil
	}
	return msgs[0].ID, nil
}

// backlog queues f's missed entries after f.after up to upTo.
func (t *Tracker) backlog(ctx context.Context, f *follower, upTo string) error {
	msgs, err := t.rdb.XRangeN(ctx, t.streamKey(), "("+f.after, upTo, maxBacklog).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return fmt.Errorf("follow changes: replay after %s: %w", f.after, err)
	}
	for _, m := range msgs {
		if ev, ok := decodeEntry(m, f.tenant); ok {
			f.out <- ev
		}
		f.after = m.ID
	}
	if f.after == "" || compareIDs(f.after, upTo) < 0 {
		f.after = upTo
	}
	return nil
}

// readStream is the hub's one reader; it ends when nobody subscribes.
func (t *Tracker) readStream() {
	h := &t.hub
	ctx := context.Background()
	for {
		h.mu.Lock()
		if len(h.subs) == 0 {
			h.running = false
			h.mu.Unlock()
			return
		}
		last := h.last
		h.mu.Unlock()
		res, err := t.rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{t.streamKey(), last}, Count: 512, Block: time.Second}).Result()
		if errors.Is(err, redis.ErrClosed) {
			// The client is gone (shutdown): end every stream.
			h.mu.Lock()
			for f := range h.subs {
				delete(h.subs, f)
				close(f.out)
			}
			h.running = false
			h.mu.Unlock()
			return
		}
		if err != nil && !errors.Is(err, redis.Nil) {
			t.opts.Logger.Warn("read change stream", "error", err)
			time.Sleep(time.Second)
			continue
		}
		h.mu.Lock()
		for _, s := range res {
			for _, m := range s.Messages {
				h.last = m.ID
				for f := range h.subs {
					if compareIDs(m.ID, f.after) <= 0 {
						continue
					}
					ev, ok := decodeEntry(m, f.tenant)
					if !ok {
						continue
					}
					select {
					case f.out <- ev:
					default: // too slow: drop it, its client reconnects
						delete(h.subs, f)
						close(f.out)
					}
				}
			}
		}
		h.mu.Unlock()
	}
}

// decodeEntry turns a stream entry into an event for tenant ("" = any).
func decodeEntry(m redis.XMessage, tenant string) (StreamEvent, bool) {
	if tn, _ := m.Values["tenant"].(string); tenant != "" && tn != tenant {
		return StreamEvent{}, false
	}
	raw, _ := m.Values["msg"].(string)
	var c Change
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return StreamEvent{}, false
	}
	return StreamEvent{ID: m.ID, Change: c}, true
}

// compareIDs orders two stream ids ("" before everything).
func compareIDs(a, b string) int {
	am, as := splitID(a)
	bm, bs := splitID(b)
	switch {
	case am != bm:
		return cmpInt(am, bm)
	default:
		return cmpInt(as, bs)
	}
}

func splitID(id string) (uint64, uint64) {
	ms, seq, _ := cutByte(id, '-')
	a, _ := strconv.ParseUint(ms, 10, 64)
	b, _ := strconv.ParseUint(seq, 10, 64)
	return a, b
}

func cutByte(s string, c byte) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func cmpInt(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Subscribe streams the changes of one tenant ("" = all tenants) from now
// on, without stream ids (see Follow). It returns once the subscription is
// active, so no change applied after it returns is missed.
func (t *Tracker) Subscribe(ctx context.Context, tenant string) (<-chan Change, func()) {
	evs, stop, err := t.Follow(ctx, tenant, "")
	out := make(chan Change, 64)
	if err != nil {
		t.opts.Logger.Warn("subscribe to channel events", "error", err)
		close(out)
		return out, func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(out)
		for ev := range evs {
			out <- ev.Change
		}
	}()
	return out, func() { stop(); <-done }
}

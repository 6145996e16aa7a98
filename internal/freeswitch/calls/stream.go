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
// many event streams are open. It runs while anyone subscribes. Nothing
// under its lock ever waits on a subscriber: a send that would block drops
// that subscriber instead, and a resume's replay is read and delivered
// outside the lock.
type hub struct {
	mu      sync.Mutex
	subs    map[*follower]struct{}
	running bool
	last    string // id of the last entry the reader took
}

// followBuffer is how many live events wait for one subscriber; one that
// falls further behind is dropped (its stream ends; it resumes with its
// last id).
const followBuffer = 1024

type follower struct {
	tenant string
	// live is filled by the reader without blocking and closed when the
	// follower is dropped or stops.
	live chan StreamEvent
	// after is the id of the last entry given to live; older ones from the
	// reader are skipped.
	after string
}

// Follow streams the changes of one tenant ("" = all) with their stream
// ids. With lastID (a client's Last-Event-ID) it first replays what came
// after it that is still retained, then continues live with no gap and no
// duplicate. The channel closes when ctx ends or stop is called; a
// subscriber that does not keep up (1024 live events queued) is dropped
// (its channel closes once it has read what was queued) rather than stall
// the others.
func (t *Tracker) Follow(ctx context.Context, tenant, lastID string) (<-chan StreamEvent, func(), error) {
	if lastID != "" && !ValidStreamID(lastID) {
		return nil, nil, fmt.Errorf("follow changes: invalid stream id %q", lastID)
	}
	f := &follower{tenant: tenant, live: make(chan StreamEvent, followBuffer)}
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
	// Live delivery starts after the reader's position; the replay (read
	// below, without the lock) covers lastID up to it.
	upTo := h.last
	f.after = upTo
	h.subs[f] = struct{}{}
	h.mu.Unlock()

	done := make(chan struct{})
	var once sync.Once
	stop := func() {
		once.Do(func() {
			close(done)
			h.drop(f)
		})
	}
	if lastID == "" {
		context.AfterFunc(ctx, stop)
		return f.live, stop, nil
	}
	missed, err := t.backlog(ctx, tenant, lastID, upTo)
	if err != nil {
		stop()
		return nil, nil, err
	}
	out := make(chan StreamEvent)
	go func() {
		defer close(out)
		sent := lastID
		send := func(ev StreamEvent) bool {
			if compareIDs(ev.ID, sent) <= 0 {
				return true // already given
			}
			select {
			case out <- ev:
				sent = ev.ID
				return true
			case <-done:
				return false
			}
		}
		for _, ev := range missed {
			if !send(ev) {
				return
			}
		}
		for ev := range f.live {
			if !send(ev) {
				return
			}
		}
	}()
	context.AfterFunc(ctx, stop)
	return out, stop, nil
}

// drop removes f from the hub and closes its live channel (once).
func (h *hub) drop(f *follower) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropLocked(f)
}

func (h *hub) dropLocked(f *follower) {
	if _, ok := h.subs[f]; ok {
		delete(h.subs, f)
		close(f.live)
	}
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

// backlog reads tenant's entries after "after" up to upTo (at most
// maxBacklog); the caller delivers them without holding the hub's lock.
func (t *Tracker) backlog(ctx context.Context, tenant, after, upTo string) ([]StreamEvent, error) {
	if compareIDs(after, upTo) >= 0 {
		return nil, nil
	}
	msgs, err := t.rdb.XRangeN(ctx, t.streamKey(), "("+after, upTo, maxBacklog).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("follow changes: replay after %s: %w", after, err)
	}
	evs := make([]StreamEvent, 0, len(msgs))
	for _, m := range msgs {
		if ev, ok := decodeEntry(m, tenant); ok {
			evs = append(evs, ev)
		}
	}
	return evs, nil
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
				h.dropLocked(f)
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
					case f.live <- ev:
						f.after = m.ID
					default: // too slow: drop it, its client resumes
						h.dropLocked(f)
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
	done, quit := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer close(out)
		for ev := range evs {
			select {
			case out <- ev.Change:
			case <-quit: // stopped while its reader is away
				return
			}
		}
	}()
	var once sync.Once
	return out, func() { once.Do(func() { close(quit); stop() }); <-done }
}

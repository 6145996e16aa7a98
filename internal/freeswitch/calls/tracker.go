package calls

import (
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/freeswitch/esl"
	"github.com/switchboard/switchboard/internal/platform/keyprefix"
)

//go:embed apply.lua
var applySource string

// Options configure a Tracker. The zero value is usable.
type Options struct {
	// Prefix starts every Redis key; default "sb:{calls}:" (the server
	// passes its installation's, "sb:<installation id>:"). Its hash tag
	// ({…}) puts all of the tracker's keys in one Redis Cluster slot, as
	// its scripts and transactions need; a prefix without one gets
	// "{calls}:" appended. Tests use it to share one Redis.
	Prefix string
	// TenantExists, when set, decides whether a dialplan context names a
	// tenant (it must be fast: it runs for every event). When nil, any
	// ^[A-Za-z0-9_]{2,32}$ context other than default, public and features
	// is taken as a tenant. variable_sb_tenant is trusted without it.
	TenantExists func(name string) bool
	// OnEnd receives the CDR of every ended channel, once. When it fails the
	// CDR stays in the pending list for RetryPendingCDRs. When nil no CDRs
	// are queued. Implementations should still upsert on (node, uuid): after
	// a crash between OnEnd and the removal from the list, a retry repeats.
	OnEnd func(ctx context.Context, cdr CDR) error
	// OnCallEvent receives call.started and call.answered of every channel,
	// once each, in that order and before its CDR, through the same pending
	// list as the CDRs (a failure keeps the event and what follows it for
	// the channel queued for RetryPendingCDRs). When nil none are queued.
	// As with OnEnd, a crash between the hand-off and the removal from the
	// list repeats it: implementations de-duplicate on (node, uuid, type).
	OnCallEvent func(ctx context.Context, ev CallEvent) error
	// EndedTTL is how long an ended channel stays as a tombstone (readable
	// with Get, and ignoring late events); default 10 minutes.
	EndedTTL time.Duration
	// RetryAfter is how old a pending CDR must be before RetryPendingCDRs
	// takes it, so that it does not race the replica still delivering it;
	// default one minute.
	RetryAfter time.Duration
	// Workers is the number of goroutines Consume and Replay use; default 32.
	Workers int
	// Logger receives warnings (OnEnd failures); default slog.Default().
	Logger *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Spool, when set, keeps the batches Redis cannot take durably (see
	// Spool and ReplayHeld).
	Spool Spool
	// StreamRetention is how long the change stream keeps changes for
	// clients resuming with Last-Event-ID; default DefaultStreamRetention.
	StreamRetention time.Duration
}

// Tracker applies FreeSWITCH channel events to the live channel state in
// Redis and answers queries about it. It is safe for concurrent use, also
// from several replicas sharing one Redis.
type Tracker struct {
	rdb    redis.UniversalClient
	opts   Options
	prefix string
	script *redis.Script
	// cores caches each node's current Core-UUID (node -> string) so that
	// NoteCore costs nothing for the events of a known process.
	cores sync.Map
	seen  sync.Map // node -> time.Time of the last nodeseen write
	calls callbacks
	hub   hub
}

// NewTracker returns a Tracker storing its state in rdb.
func NewTracker(rdb redis.UniversalClient, opts Options) *Tracker {
	opts.Prefix = keyprefix.OrDefault(opts.Prefix)
	if !hasHashTag(opts.Prefix) {
		opts.Prefix += "{calls}:"
	}
	if opts.EndedTTL <= 0 {
		opts.EndedTTL = 10 * time.Minute
	}
	if opts.RetryAfter <= 0 {
		opts.RetryAfter = time.Minute
	}
	if opts.Workers <= 0 {
		opts.Workers = 32
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.StreamRetention <= 0 {
		opts.StreamRetention = DefaultStreamRetention
	}
	return &Tracker{rdb: rdb, opts: opts, prefix: opts.Prefix, script: redis.NewScript(scriptSource())}
}

// Apply merges one ESL event into the live state. Events other than the
// channel events the tracker follows are ignored. Applying an event twice, or
// out of order, gives the same state as applying it once in order. It costs
// one Redis round trip (EVALSHA), plus one more when a channel ends and its
// CDR was accepted by OnEnd.
func (t *Tracker) Apply(ctx context.Context, e esl.Event) error {
	p, ok, err := t.patchFromEvent(e, t.opts.Now())
	if err != nil || !ok {
		return err
	}
	if _, err := t.run(ctx, p); err != nil {
		return fmt.Errorf("apply %s %s: %w", e.Name(), p.UUID, err)
	}
	return nil
}

// run executes the apply script for one patch and delivers what it queued.
// It reports whether the channel's public state changed.
func (t *Tracker) run(ctx context.Context, p patch) (bool, error) {
	res, err := t.script.Run(ctx, t.rdb, p.keys(), p.args()...).Slice()
	if err != nil {
		return false, err
	}
	changed, envs, err := scriptReply(res)
	if err != nil {
		return false, err
	}
	if len(envs) > 0 {
		t.deliver(ctx, envs)
	}
	return changed, nil
}

// scriptReply decodes the apply script's reply: whether the channel's
// public state changed, and the envelopes it queued, in order.
func scriptReply(res []any) (changed bool, envs []string, err error) {
	if len(res) < 1 {
		return false, nil, fmt.Errorf("apply script: unexpected reply %v", res)
	}
	n, _ := res[0].(int64)
	for _, r := range res[1:] {
		if env, _ := r.(string); env != "" {
			envs = append(envs, env)
		}
	}
	return n == 1, envs, nil
}

// deliver hands queued envelopes (lifecycle events and CDRs) to
// OnCallEvent and OnEnd, channel by channel in each channel's order, and
// removes the accepted ones from the pending list. Failures are logged:
// those envelopes, and the later ones of the same channel, stay queued for
// RetryPendingCDRs.
func (t *Tracker) deliver(ctx context.Context, envs []string) {
	for _, group := range t.byChannel(ctx, envs) {
		if _, err := t.deliverChannel(ctx, group, true); err != nil {
			t.opts.Logger.Warn("call event or cdr delivery failed, kept for retry", "error", err)
		}
	}
}

// byChannel decodes envelopes and groups them per channel, keeping their
// order; unreadable ones are dropped from the list rather than block it.
func (t *Tracker) byChannel(ctx context.Context, envs []string) [][]queued {
	var out [][]queued
	at := map[string]int{}
	for _, raw := range envs {
		item, err := decodeEnvelope(raw)
		if err != nil {
			t.opts.Logger.Error("drop unreadable cdr", "error", err, "cdr", raw)
			t.rdb.LRem(ctx, t.prefix+"cdr:pending", 1, raw)
			continue
		}
		m := item.member()
		i, ok := at[m]
		if !ok {
			i = len(out)
			at[m] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], item)
	}
	return out
}

// Hand-off order: items of one channel are handed over one deliverer at a
// time (a lock per channel) and only in their order n: cdr:done:<member>
// holds the last n handed over. An item whose predecessor is still queued
// (another replica is handing it over, or it failed) waits; with wait set
// for up to handOffWait, then it is left to RetryPendingCDRs.
const (
	handOffWait = 500 * time.Millisecond
	handOffLock = 15 * time.Second
)

// deliverChannel hands one channel's items over in order; it returns how
// many it handed over (or found handed over already) and the first error.
func (t *Tracker) deliverChannel(ctx context.Context, items []queued, wait bool) (int, error) {
	slices.SortStableFunc(items, func(a, b queued) int { return cmp.Compare(a.n, b.n) })
	m := items[0].member()
	lockKey, doneKey := t.prefix+"cdr:lock:"+m, t.prefix+"cdr:done:"+m
	token := uuid.NewString()
	deadline := time.Now().Add(handOffWait)
	total := 0
	for {
		done, err := claimScript.Run(ctx, t.rdb, []string{lockKey, doneKey}, token, handOffLock.Milliseconds()).Int64()
		if err != nil {
			return total, fmt.Errorf("hand-off lock %s: %w", m, err)
		}
		if done >= 0 {
			n, herr := t.handInOrder(ctx, lockKey, doneKey, token, done, items)
			total += n
			items = items[n:]
			if herr != nil || len(items) == 0 {
				return total, herr
			}
		}
		if !wait || time.Now().After(deadline) {
			return total, nil
		}
		select {
		case <-ctx.Done():
			return total, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// claimScript takes a channel's hand-off lock (KEYS[1]) for token ARGV[1]
// for ARGV[2] ms and answers the last n handed over (KEYS[2], 0 when
// none), or -1 when another deliverer holds the lock.
var claimScript = redis.NewScript(`
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return -1 end
return tonumber(redis.call('GET', KEYS[2]) or '0')`)

// finishScript records the last n handed over (KEYS[1] = ARGV[1], kept
// ARGV[2] s), removes the handed-over entries ARGV[4..] from the pending
// list (KEYS[2]) and releases the lock (KEYS[3]) if token ARGV[3] holds it.
var finishScript = redis.NewScript(`
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
for i = 4, #ARGV do redis.call('LREM', KEYS[2], 1, ARGV[i]) end
if redis.call('GET', KEYS[3]) == ARGV[3] then redis.call('DEL', KEYS[3]) end
return 1`)

// handInOrder (holding the channel's lock) hands over the items that
// follow the last one handed over (done), stopping at a gap or a failure,
// then records the progress, removes them from the pending list and
// releases the lock in one round trip.
func (t *Tracker) handInOrder(ctx context.Context, lockKey, doneKey, token string, done int64, items []queued) (int, error) {
	var handed []string
	var herr error
	for _, it := range items {
		if it.n != 0 && it.n <= done {
			handed = append(handed, it.raw) // handed over before; only its removal was lost
			continue
		}
		if it.n != 0 && it.n != done+1 {
			break // its predecessor is still queued
		}
		if herr = t.hand(ctx, it); herr != nil {
			break
		}
		handed = append(handed, it.raw)
		if it.n != 0 {
			done = it.n
		}
	}
	args := []any{done, int64(guardFactor * t.opts.EndedTTL / time.Second), token}
	for _, raw := range handed {
		args = append(args, raw)
	}
	fctx := context.WithoutCancel(ctx)
	if err := finishScript.Run(fctx, t.rdb, []string{doneKey, t.prefix + "cdr:pending", lockKey}, args...).Err(); err != nil {
		t.opts.Logger.Warn("remove delivered cdrs", "error", err)
	}
	return len(handed), herr
}

// hand gives one queued item to its callback.
func (t *Tracker) hand(ctx context.Context, item queued) error {
	if item.event != nil {
		if t.opts.OnCallEvent == nil {
			return nil // queued before the callback was unset: dropped
		}
		return t.opts.OnCallEvent(ctx, *item.event)
	}
	if t.opts.OnEnd == nil {
		return nil
	}
	return t.opts.OnEnd(ctx, item.cdr)
}

// hasHashTag reports whether Redis Cluster hashes keys starting with
// prefix by a {tag} inside it rather than by the whole key name.
func hasHashTag(prefix string) bool {
	open := strings.IndexByte(prefix, '{')
	return open >= 0 && strings.IndexByte(prefix[open+1:], '}') > 0
}

// member is how a channel appears in the live sets: "<node>:<uuid>".
func member(node, uuid string) string { return node + ":" + uuid }

// splitMember reverses member; uuids contain no ':'.
func splitMember(m string) (node, uuid string, err error) {
	i := strings.LastIndexByte(m, ':')
	if i <= 0 {
		return "", "", errors.New("invalid channel member " + m)
	}
	return m[:i], m[i+1:], nil
}

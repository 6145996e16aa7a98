package calls

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/esl"
)

//go:embed apply.lua
var applySource string

// Options configure a Tracker. The zero value is usable.
type Options struct {
	// Prefix starts every Redis key; default "sb:{calls}:". Its hash tag
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
	if opts.Prefix == "" {
		opts.Prefix = "sb:"
	}
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

// run executes the apply script for one patch and delivers a queued CDR. It
// reports whether the channel's public state changed.
func (t *Tracker) run(ctx context.Context, p patch) (bool, error) {
	res, err := t.script.Run(ctx, t.rdb, p.keys(), p.args()...).Slice()
	if err != nil {
		return false, err
	}
	changed, env, err := scriptReply(res)
	if err != nil {
		return false, err
	}
	if env != "" {
		t.deliver(ctx, []string{env})
	}
	return changed, nil
}

// scriptReply decodes the apply script's reply: whether the channel's
// public state changed, and the CDR envelope it queued, if any.
func scriptReply(res []any) (changed bool, env string, err error) {
	if len(res) != 2 {
		return false, "", fmt.Errorf("apply script: unexpected reply %v", res)
	}
	n, _ := res[0].(int64)
	env, _ = res[1].(string)
	return n == 1, env, nil
}

// deliver hands queued CDR envelopes to OnEnd and removes the accepted ones
// from the pending list in one round trip. Failures are logged: those
// envelopes stay queued for RetryPendingCDRs.
func (t *Tracker) deliver(ctx context.Context, envs []string) {
	var done []string
	for _, env := range envs {
		cdr, err := decodeEnvelope(env)
		if err == nil {
			err = t.opts.OnEnd(ctx, cdr)
		}
		if err != nil {
			t.opts.Logger.Warn("cdr delivery failed, kept for retry", "error", err)
			continue
		}
		done = append(done, env)
	}
	var err error
	switch len(done) {
	case 0:
		return
	case 1:
		err = t.rdb.LRem(ctx, t.prefix+"cdr:pending", 1, done[0]).Err()
	default:
		_, err = t.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
			for _, env := range done {
				pipe.LRem(ctx, t.prefix+"cdr:pending", 1, env)
			}
			return nil
		})
	}
	if err != nil {
		t.opts.Logger.Warn("remove delivered cdrs", "error", err)
	}
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

package fsxml

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/models"
)

// How committed changes reach the in-memory generations (gens.go) of
// every replica:
//
//   - the writer observes its own changes right after the commit
//     (Committed, before the API answers) and publishes them on a Redis
//     channel;
//   - every replica subscribes to that channel (notifier) and observes
//     what arrives;
//   - the outbox subscriber publishes every change again, retried until
//     Redis takes it (a writer's publish may fail);
//   - every replica polls the outbox heads (headsPoll), so a change whose
//     notifications were all lost is known within that interval anyway.
//
// The writer waits (at most ackWait) until every other subscribed replica
// acknowledged having applied its notification, so the API answers a write
// only once every live replica will serve it: the next fetch anywhere sees
// it, however late a replica's scheduler runs its subscriber.
//
// Pub/sub is at-most-once: messages published while a subscriber is
// disconnected are lost to it. So a replica trusts its memory only while
// its subscription is confirmed: after every (re)subscription it first
// catches up from the outbox, and until then, or whenever the connection
// fails, fetches render from the database and cache nothing.

// notice is one change as published: its scope, id and, for an extension,
// the extension names it touched (before and after a rename).
type notice struct {
	Scope string   `json:"s"`
	ID    int64    `json:"id"`
	Exts  []string `json:"x,omitempty"`
	// Reset drops everything every replica holds (ResetAll).
	Reset bool `json:"reset,omitempty"`
}

// envelope is one message on the channel: notices from a replica (Seq set
// when the sender waits for acknowledgements), or an acknowledgement of
// message Ack sent to replica To.
type envelope struct {
	From    string   `json:"from,omitempty"`
	Seq     uint64   `json:"seq,omitempty"`
	Notices []notice `json:"n,omitempty"`
	Ack     uint64   `json:"ack,omitempty"`
	To      string   `json:"to,omitempty"`
}

// ackWait bounds how long a write waits for the other replicas'
// acknowledgements; one that does not answer in time learns of the change
// from the outbox poll.
const ackWait = 250 * time.Millisecond

// scopeOf is the generation scope a change moves: its tenant, or the
// platform ("") for platform resources.
func scopeOf(c changes.Change) string { return strings.ToLower(c.Tenant) }

// noticeOf describes a change. A change to one extension (not a rename)
// names it, so a model can be updated by reading only that extension.
func noticeOf(c changes.Change) notice {
	n := notice{Scope: scopeOf(c), ID: c.ID}
	if c.Resource == "extensions" {
		if names := extensionNames(c); len(names) == 1 {
			n.Exts = names
		}
	}
	return n
}

// observe makes one notice known here.
func (s *Service) observe(n notice) {
	if n.Reset {
		s.gens.reset()
		// Nothing held is valid under the new epoch: its memory is freed
		// now, not as the new models push it out.
		s.models.tenants.clear()
		s.local.clear()
		s.startPreload()
		return
	}
	s.gens.observe(n.Scope, n.ID, n.Exts)
}

// Committed is the writer's fast path, called right after its commit: the
// changes are known here at once (the writer's next fetch sees them) and
// published to the other replicas. A failed publish is only logged: the
// outbox subscriber publishes again and every replica polls the outbox.
func (s *Service) Committed(ctx context.Context, chs []changes.Change) {
	ns := make([]notice, 0, len(chs))
	for _, c := range chs {
		n := noticeOf(c)
		s.observe(n)
		ns = append(ns, n)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := s.publish(ctx, ns, true); err != nil {
		s.warnRedis("xml cache: change not published after a write (the outbox publishes it again)", err)
	}
}

// CacheSubscriber is the outbox subscriber that publishes every change to
// every replica; it fails (and is retried) until Redis takes it.
func (s *Service) CacheSubscriber() changes.Subscriber {
	return changes.Func{ID: "xml-cache", Fn: func(ctx context.Context, c changes.Change) error {
		n := noticeOf(c)
		s.observe(n)
		return s.publish(ctx, []notice{n}, false)
	}}
}

// publish sends notices to every replica; with wait it returns once each
// other subscribed replica acknowledged them, or after ackWait.
func (s *Service) publish(ctx context.Context, ns []notice, wait bool) error {
	if s.rdb == nil || len(ns) == 0 || !s.redisUp() {
		return nil
	}
	env := envelope{From: s.note.id, Notices: ns}
	var w *ackWaiter
	if wait {
		env.Seq = s.note.seq.Add(1)
		w = s.note.await(env.Seq)
		defer s.note.forget(env.Seq)
	}
	msg, err := json.Marshal(env)
	if err != nil {
		return err
	}
	receivers, err := s.rdb.Publish(ctx, s.channel, msg).Result()
	if err != nil || w == nil {
		return err
	}
	// Our own subscription is among the receivers and does not answer.
	others := int(receivers)
	if s.note.live.Load() {
		others--
	}
	s.note.expect(w, others)
	select {
	case <-w.done:
	case <-time.After(ackWait):
	case <-ctx.Done():
	}
	return nil
}

// ResetAll tells every replica of the installation on st using rdb to drop
// every model and document it holds (as after a restart of all of them);
// the benchmark's cold modes use it. It takes effect when the notification
// arrives.
func ResetAll(ctx context.Context, st *models.Store, rdb redis.UniversalClient) error {
	channel, err := ChannelFor(ctx, st)
	if err != nil {
		return err
	}
	msg, _ := json.Marshal(envelope{Notices: []notice{{Reset: true}}})
	return rdb.Publish(ctx, channel, msg).Err()
}

// ChannelFor names the notification channel of the installation on st:
// its installation id, so installations sharing a Redis server (on one
// database number or several: pub/sub ignores it) never hear each other.
func ChannelFor(ctx context.Context, st *models.Store) (string, error) {
	prefix, err := st.KeyPrefix(ctx)
	if err != nil {
		return "", err
	}
	return prefix + changesChannel, nil
}

// changesChannel follows the installation's key prefix in the channel name.
const changesChannel = "xml:changes"

// notifier keeps the subscription and says whether memory can be trusted.
type notifier struct {
	live atomic.Bool
	// id names this replica's messages; seq numbers those awaiting
	// acknowledgements, which waiting holds.
	id      string
	seq     atomic.Uint64
	mu      sync.Mutex
	waiting map[uint64]*ackWaiter
	// pollMu serialises outbox polls (the ticker's and the catch-ups).
	pollMu sync.Mutex
	cursor int64 // outbox rows up to here were read
	// positioned is set once the cursor was placed at the outbox head
	// (the first poll).
	positioned bool
	// interrupted is set once a subscription was lost: the next one waits
	// out other replicas' Redis skip before memory is trusted.
	interrupted atomic.Bool
}

// headsPoll is how often other replicas' commits are read from the outbox.
const headsPoll = 250 * time.Millisecond

// subscribe holds the notification subscription until ctx ends,
// reconnecting after failures.
func (s *Service) subscribe(ctx context.Context) {
	for ctx.Err() == nil {
		err := s.subscribeOnce(ctx)
		s.note.live.Store(false)
		s.note.interrupted.Store(true)
		if ctx.Err() != nil {
			return
		}
		s.warnRedis("xml cache: change notifications interrupted", err)
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// pingEvery is how long a quiet subscription waits before it checks that
// its connection is still there.
const pingEvery = 2 * time.Second

func (s *Service) subscribeOnce(ctx context.Context) error {
	ps := s.rdb.Subscribe(ctx)
	defer ps.Close()
	if err := ps.Subscribe(ctx, s.channel); err != nil {
		return err
	}
	// Wait for the confirmation: from here on nothing published is lost.
	for {
		v, err := ps.ReceiveTimeout(ctx, 5*time.Second)
		if err != nil {
			return err
		}
		if _, ok := v.(*redis.Subscription); ok {
			break
		}
	}
	// After an outage, another replica may still be skipping Redis (for
	// redisSkip after its last error: warnRedis) and commit changes it
	// cannot publish. Memory is trusted only once the outbox was read
	// after that window: until then fetches are rendered from the
	// database, as during the outage. (Seen: a replica that resubscribed
	// at once answered "not found" for a user the other had just created.)
	if s.note.interrupted.Load() {
		t := time.NewTimer(redisSkip)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	// What was published before the confirmation is read from the outbox.
	if err := s.pollHeads(ctx); err != nil {
		return err
	}
	s.note.live.Store(true)
	if !s.preloadStarted.Swap(true) {
		s.log.Info("xml cache: change notifications live", "after", time.Since(s.started).Round(time.Millisecond))
		// Beside the subscription, which must keep reading: the models
		// saved by the last process first, then the rest from the database.
		go func() {
			s.restoreModels(s.life)
			s.startPreload()
		}()
	}
	for {
		v, err := ps.ReceiveTimeout(ctx, pingEvery)
		if err != nil {
			var ne interface{ Timeout() bool }
			if errors.As(err, &ne) && ne.Timeout() && ctx.Err() == nil {
				if err := ps.Ping(ctx); err != nil {
					return err
				}
				continue
			}
			return err
		}
		if m, ok := v.(*redis.Message); ok {
			s.receive(ctx, m.Payload)
		}
	}
}

// receive applies one message: notices from another replica (then
// acknowledged when the sender waits), or an acknowledgement for us.
func (s *Service) receive(ctx context.Context, payload string) {
	var env envelope
	if json.Unmarshal([]byte(payload), &env) != nil {
		return // not ours
	}
	if env.Ack != 0 {
		if env.To == s.note.id {
			s.note.acked(env.Ack)
		}
		return
	}
	if env.From == s.note.id {
		return // observed when sent
	}
	for _, n := range env.Notices {
		s.observe(n)
	}
	if env.Seq != 0 {
		ack, _ := json.Marshal(envelope{Ack: env.Seq, To: env.From})
		if err := s.rdb.Publish(ctx, s.channel, ack).Err(); err != nil {
			s.warnRedis("xml cache: change notification not acknowledged", err)
		}
	}
}

func newReplicaID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ackWaiter counts the acknowledgements of one message.
type ackWaiter struct {
	got, want int // want < 0: not known yet
	done      chan struct{}
	closed    bool
}

func (n *notifier) await(seq uint64) *ackWaiter {
	w := &ackWaiter{want: -1, done: make(chan struct{})}
	n.mu.Lock()
	if n.waiting == nil {
		n.waiting = map[uint64]*ackWaiter{}
	}
	n.waiting[seq] = w
	n.mu.Unlock()
	return w
}

func (n *notifier) forget(seq uint64) {
	n.mu.Lock()
	delete(n.waiting, seq)
	n.mu.Unlock()
}

func (n *notifier) acked(seq uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if w := n.waiting[seq]; w != nil {
		w.got++
		w.check()
	}
}

// expect sets how many acknowledgements w's message needs.
func (n *notifier) expect(w *ackWaiter, others int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	w.want = others
	w.check()
}

func (w *ackWaiter) check() {
	if !w.closed && w.want >= 0 && w.got >= w.want {
		w.closed = true
		close(w.done)
	}
}

// pollHeads reads committed changes newer than the cursor from the outbox.
func (s *Service) pollHeads(ctx context.Context) error {
	s.note.pollMu.Lock()
	defer s.note.pollMu.Unlock()
	if !s.note.positioned {
		// The history is not read: nothing is in memory yet (memory is
		// trusted only after this first poll), so every model is read
		// after these changes committed. Reading it would cost a restart
		// a scan of the whole outbox before the first cached answer.
		head, err := s.st.OutboxHead(ctx)
		if err != nil {
			return err
		}
		s.note.cursor, s.note.positioned = head, true
		return nil
	}
	// The changes themselves are read (not only each scope's newest id) so
	// that a change to one extension is known as such even when the poll
	// sees it before the writer's Committed does: a bare id would be
	// recorded as "anything changed" and force a rebuild of the tenant.
	chs, err := s.st.OutboxAfter(ctx, s.note.cursor, pollBatch)
	if err != nil {
		return err
	}
	for _, c := range chs {
		s.observe(noticeOf(c))
		s.note.cursor = max(s.note.cursor, c.ID)
	}
	if len(chs) < pollBatch {
		return nil
	}
	// A burst larger than one batch: the rest is known by scope only.
	top, last, err := s.st.OutboxHeads(ctx, s.note.cursor)
	if err != nil {
		return err
	}
	for scope, id := range top {
		s.gens.observe(scope, id, nil)
	}
	s.note.cursor = max(s.note.cursor, last)
	return nil
}

// pollBatch is how many changes one outbox poll reads one by one.
const pollBatch = 256

// pollLoop polls the outbox heads until ctx ends.
func (s *Service) pollLoop(ctx context.Context) {
	t := time.NewTicker(headsPoll)
	defer t.Stop()
	for {
		if err := s.pollHeads(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("xml cache: read outbox heads", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// extensionNames are the names an extension change touched.
func extensionNames(c changes.Change) []string {
	var names []string
	for _, img := range []json.RawMessage{c.Before, c.After} {
		var obj struct {
			Name string `json:"name"`
		}
		if img == nil || json.Unmarshal(img, &obj) != nil || obj.Name == "" {
			continue
		}
		if len(names) == 0 || names[0] != obj.Name {
			names = append(names, obj.Name)
		}
	}
	return names
}

// DirectoryUsers says which FreeSWITCH directory users a change makes
// stale: the extension's user ids (before and after a rename), or all
// (true) when a change reaches every user of a tenant (the tenant itself,
// its emergency locations). Other changes leave the directory alone.
func DirectoryUsers(c changes.Change) (users []string, all bool) {
	switch c.Resource {
	case "tenants":
		return nil, c.Op != changes.Create
	case "emergency_locations":
		return nil, true
	case "extensions":
		for _, name := range extensionNames(c) {
			users = append(users, naming.UserID(c.Tenant, name))
		}
		return users, false
	}
	return nil, false
}

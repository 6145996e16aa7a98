package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/changes/outbox"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/platform/lease"
	"github.com/switchboard/switchboard/internal/platform/worker"
)

// Queue is the durable path of channel messages. A request is answered as
// soon as its message is committed to the chat_outbox table (one insert); a
// worker posts the rendered stanza to ejabberd afterwards and, once
// ejabberd took it, deletes the row and records the chat.message event in
// one transaction per batch (so the event still means "posted", and the
// request path does not wait for the outbox sequence).
//
//   - Nothing is lost: a row stays until ejabberd answered success and the
//     room has handled it, across restarts and outages; a message refused
//     outright (a 400 answer or a failure code: the stanza itself is wrong)
//     is logged and dropped. send_stanza answers once the stanza is routed
//     to the room's process, not once the room archived it, so a room's
//     posts are followed by one get_room_options: the room answers it after
//     the messages queued before it, and a room that was stopped with them
//     unread (ejabberd shutting down) fails it, and they are posted again.
//   - Order per room: rows of one room are posted one after another in id
//     order, and a room whose oldest row waits for a retry holds back the
//     rest; different rooms are posted concurrently (Concurrency).
//   - One replica posts at a time: the worker holds a lease row
//     (outbox_leases) and stops posting before the lease can have passed
//     to another replica.
//   - A retry posts the same stanza with the same id (also its XEP-0359
//     origin-id). A message is posted twice only when ejabberd took it but
//     the success was not recorded (the replica died between the two, the
//     answer was lost, or ejabberd stopped between the post and its
//     confirmation); clients recognise the repeat by its id.
//
// While the chat server is known to be down (Client.Up), Enqueue refuses
// with ErrUnavailable and the worker waits; it resumes when the server
// answers again.
type Queue struct {
	c    *Client
	st   *models.Store
	opts QueueOptions
	// loop is the posting worker, run while the lease is held; Wake wakes it.
	loop *worker.Loop
	// lease is held while posting; nothing is posted once it may have run out.
	lease *lease.Holder
	// upEpoch counts the chat server's returns after an outage; loaded is
	// the epoch whose rooms the worker has made sure are running.
	upEpoch atomic.Int64
	loaded  int64
	// nicks is the sender-name nick of each room (sender.go).
	nicks roomNicks
}

// QueueOptions tune a Queue; the zero value is usable.
type QueueOptions struct {
	// Group keeps servers that share a database without being replicas of
	// one installation apart (tests): the outbox group.
	Group string
	// Holder identifies this replica in the lease (default a random id).
	Holder string
	// Concurrency is how many rooms are posted to at once (default 16).
	Concurrency int
	// Batch is how many rows are read at once (default 200).
	Batch int
	// Poll is how often the table is read without a wake-up (default 1 s):
	// other replicas' messages are found this way.
	Poll time.Duration
	// Linger is how long the worker waits after a wake-up before reading
	// the table, to post the messages that arrive meanwhile in the same
	// batch (default 20 ms; what a message's posting may be delayed by).
	Linger time.Duration
	// LeaseTTL is how long the worker's lease lasts without renewal
	// (default 15 s); it is renewed every third of it.
	LeaseTTL time.Duration
	// SendTimeout bounds one ejabberd call (default 5 s).
	SendTimeout time.Duration
	// RetryMin and RetryMax bound the backoff of a room whose message
	// failed (default 250 ms and 5 s).
	RetryMin, RetryMax time.Duration
	Logger             *slog.Logger
}

func (o *QueueOptions) defaults() {
	if o.Holder == "" {
		o.Holder = "chat-" + models.NewAPIKeyValue()[3:15]
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 16
	}
	if o.Batch <= 0 {
		o.Batch = 200
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.Linger <= 0 {
		o.Linger = 20 * time.Millisecond
	}
	if o.LeaseTTL <= 0 {
		o.LeaseTTL = 15 * time.Second
	}
	if o.SendTimeout <= 0 {
		o.SendTimeout = 5 * time.Second
	}
	if o.RetryMin <= 0 {
		o.RetryMin = 250 * time.Millisecond
	}
	if o.RetryMax <= 0 {
		o.RetryMax = 5 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// NewQueue returns the queue of channel messages posted through c.
func NewQueue(c *Client, st *models.Store, opts QueueOptions) *Queue {
	opts.defaults()
	name := "chat-messages"
	if opts.Group != "" {
		name = opts.Group + ":" + name
	}
	q := &Queue{c: c, st: st, opts: opts, lease: lease.NewHolder(outbox.NewLease(st, name, opts.Holder, opts.LeaseTTL), lease.Options{Logger: opts.Logger}),
		loop: worker.New(worker.Options{Name: "chat queue", Poll: opts.Poll, Linger: opts.Linger, Logger: opts.Logger})}
	c.OnUp(func() { q.upEpoch.Add(1); q.Wake() })
	return q
}

// Wake makes the worker look at the table now; it never blocks.
func (q *Queue) Wake() { q.loop.Wake() }

// Event is what the chat.message event of a post tells webhooks; it is
// recorded once the post reached the chat server.
type Event struct {
	Tenant, Channel, FromName, Body string
}

// eventType is the event recorded for each posted message.
const eventType = "chat.message"

// Enqueue accepts m for posting into its room (ev describes it for the
// chat.message event) and returns the message id. While the chat server
// is known to be down it refuses with ErrUnavailable and records nothing.
func (q *Queue) Enqueue(ctx context.Context, m ChannelMessage, ev Event) (string, error) {
	id, _, err := q.enqueue(ctx, m, ev, 0)
	return id, err
}

// EnqueueIn is Enqueue with the check that the message's channel
// (ev.Channel) exists in the tenant tenantID and is not archived, in the
// same statement as the insert (INSERT ... SELECT): the request path's one
// round trip to the database, whose commit makes the message durable. ok
// is false, and nothing is queued, when the channel is missing or
// archived; the caller looks up which.
func (q *Queue) EnqueueIn(ctx context.Context, tenantID int64, m ChannelMessage, ev Event) (id string, ok bool, err error) {
	return q.enqueue(ctx, m, ev, tenantID)
}

func (q *Queue) enqueue(ctx context.Context, m ChannelMessage, ev Event, tenantID int64) (string, bool, error) {
	if !q.c.Up() {
		return "", false, fmt.Errorf("queue chat message: %w", ErrUnavailable)
	}
	data, err := json.Marshal(map[string]string{"channel": ev.Channel, "from_name": ev.FromName, "body": ev.Body})
	if err != nil {
		return "", false, fmt.Errorf("queue chat message: %w", err)
	}
	id, stanza := renderStanza(m)
	now := models.FormatTime(time.Now())
	args := []any{q.opts.Group, m.Room, id, stanza, ev.Tenant, ev.Channel, string(data), now, now}
	query := `INSERT INTO chat_outbox (out_group, room, stanza_id, stanza, tenant, channel, event, next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`
	if tenantID != 0 {
		query = `INSERT INTO chat_outbox (out_group, room, stanza_id, stanza, tenant, channel, event, next_attempt_at, created_at)
			SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? FROM chat_channels WHERE tenant_id = ? AND name = ? AND archived = 0`
		args = append(args, tenantID, ev.Channel)
	}
	res, err := q.st.Querier().ExecContext(ctx, query, args...)
	if err != nil {
		return "", false, fmt.Errorf("queue chat message: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return "", false, err
	}
	q.Wake()
	return id, true, nil
}

// Pending is the number of messages not yet posted (readiness, tests).
func (q *Queue) Pending(ctx context.Context) (int, error) {
	var n int
	err := q.st.Querier().GetContext(ctx, &n, `SELECT COUNT(*) FROM chat_outbox WHERE out_group = ?`, q.opts.Group)
	return n, err
}

// Run competes for the worker lease until ctx ends and posts messages
// while it holds it; it releases the lease when ctx ends.
func (q *Queue) Run(ctx context.Context) { q.lease.Run(ctx, q.lead) }

// lead posts while the lease holds (until ctx ends). Messages come in
// bursts and one at a time: a wake-up lingers a moment (Linger) so the
// next few join its batch, and the worker's database work (the due read,
// the record transaction, the events' delivery) is shared by several
// messages instead of repeated for each, and stays off the disk the
// requests' commits wait on.
func (q *Queue) lead(ctx context.Context) {
	// Another replica may have changed rooms' nicks while it held the lease.
	q.nicks.reset()
	q.loop.Run(ctx, func(ctx context.Context) (bool, error) {
		if !q.c.Up() {
			return false, nil // the server's return wakes the worker (OnUp)
		}
		n, err := q.drain(ctx, q.lease.Valid)
		// More may be due; a late renewal or an outage waits for the poll.
		return n > 0 && q.c.Up() && q.lease.Valid(), err
	})
}

// DrainOnce posts one batch of due messages without a lease and reports
// how many it read (tests and benchmarks drive it directly).
func (q *Queue) DrainOnce(ctx context.Context) (int, error) {
	return q.drain(ctx, func() bool { return true })
}

// queued is one chat_outbox row.
type queued struct {
	ID       int64  `db:"id"`
	Room     string `db:"room"`
	StanzaID string `db:"stanza_id"`
	Stanza   string `db:"stanza"`
	Attempts int    `db:"attempts"`
	Tenant   string `db:"tenant"`
	Channel  string `db:"channel"`
	Event    string `db:"event"`
}

// failure is a row to try again later.
type failure struct {
	row queued
	err error
	at  time.Time
}

// drain reads due rows (every row of a room whose oldest row is not
// waiting for a retry), posts each room's rows in order, the rooms
// concurrently, and records the outcomes in one transaction.
func (q *Queue) drain(ctx context.Context, valid func() bool) (int, error) {
	now := models.FormatTime(time.Now())
	var rows []queued
	if err := q.st.Querier().SelectContext(ctx, &rows, `SELECT o.id, o.room, o.stanza_id, o.stanza, o.attempts, o.tenant, o.channel, o.event FROM chat_outbox o
		WHERE o.out_group = ? AND o.next_attempt_at <= ?
		AND NOT EXISTS (SELECT 1 FROM chat_outbox p WHERE p.out_group = o.out_group AND p.room = o.room AND p.id < o.id AND p.next_attempt_at > ?)
		ORDER BY o.id LIMIT ?`, q.opts.Group, now, now, q.opts.Batch); err != nil {
		return 0, fmt.Errorf("chat queue: due rows: %w", err)
	}
	if len(rows) == 0 {
		return 0, nil
	}
	// After ejabberd came back, each room is loaded (get_room_options
	// starts a stored room) before anything is posted into it: a groupchat
	// message to a room ejabberd has not started again is bounced to the
	// service account, while send_stanza still answers success.
	epoch := q.upEpoch.Load()
	reload := epoch != q.loaded
	if reload {
		q.nicks.reset() // set them again: ejabberd may have lost them
	}
	var order []string
	byRoom := map[string][]queued{}
	for _, r := range rows {
		if _, ok := byRoom[r.Room]; !ok {
			order = append(order, r.Room)
		}
		byRoom[r.Room] = append(byRoom[r.Room], r)
	}
	var (
		mu     sync.Mutex
		done   []queued
		failed []failure
		wg     sync.WaitGroup
		sem    = make(chan struct{}, q.opts.Concurrency)
	)
	for _, room := range order {
		sem <- struct{}{}
		wg.Add(1)
		go func(list []queued) {
			defer func() { <-sem; wg.Done() }()
			posted, fail := q.postRoom(ctx, list, valid, reload)
			mu.Lock()
			done = append(done, posted...)
			if fail != nil {
				failed = append(failed, *fail)
			}
			mu.Unlock()
		}(byRoom[room])
	}
	wg.Wait()
	if len(failed) == 0 && len(done) == len(rows) {
		q.loaded = epoch
	}
	return len(rows), q.record(context.WithoutCancel(ctx), done, failed)
}

// postRoom posts one room's rows in order until one fails; it returns the
// rows that are finished (posted, or refused for good: Event "") and the
// failure.
func (q *Queue) postRoom(ctx context.Context, list []queued, valid func() bool, reload bool) ([]queued, *failure) {
	var finished []queued
	var members map[string]bool
	reserved := func() (map[string]bool, error) {
		var err error
		if members == nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), q.opts.SendTimeout)
			members, err = q.reservedNicks(rctx, list[0].Tenant)
			cancel()
		}
		return members, err
	}
	if reload && len(list) > 0 {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), q.opts.SendTimeout)
		_, err := q.c.RoomOptions(lctx, list[0].Room)
		cancel()
		if err != nil && !errors.Is(err, ErrNoRoom) { // a missing room: the post is refused as before
			r := list[0]
			delay := min(q.opts.RetryMin<<min(r.Attempts, 16), q.opts.RetryMax)
			return nil, &failure{row: r, err: err, at: time.Now().Add(delay)}
		}
	}
	for _, r := range list {
		if ctx.Err() != nil || !valid() || !q.c.Up() {
			return q.confirm(ctx, finished) // the rest is left for the next turn, in order
		}
		// A post that started finishes even during shutdown, so its
		// outcome is recorded rather than left to be posted again.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), q.opts.SendTimeout)
		from, stanza, err := q.sender(sctx, r, reserved)
		if err == nil {
			err = q.c.SendStanza(sctx, from, q.c.RoomJID(r.Room), stanza)
		}
		cancel()
		switch {
		case err == nil:
			finished = append(finished, r)
		case refusedForGood(err):
			q.opts.Logger.Error("chat message refused by the chat server; dropped", "room", r.Room, "id", r.StanzaID, "error", err)
			r.Event = "" // not posted: no chat.message event
			finished = append(finished, r)
		default:
			delay := min(q.opts.RetryMin<<min(r.Attempts, 16), q.opts.RetryMax)
			fail := &failure{row: r, err: err, at: time.Now().Add(delay)}
			posted, cfail := q.confirm(ctx, finished)
			if cfail != nil {
				return nil, cfail
			}
			return posted, fail
		}
	}
	return q.confirm(ctx, finished)
}

// confirm asks the room of posted rows for its options: it answers only
// after handling what was routed to it before, so a success means the
// posts reached its archive. On a failure nothing is finished and the rows
// are posted again from the first (a room that handled some of them before
// it stopped shows those twice, with the same ids: at least once, never
// lost).
func (q *Queue) confirm(ctx context.Context, finished []queued) ([]queued, *failure) {
	posted := false
	for _, r := range finished {
		posted = posted || r.Event != ""
	}
	if !posted {
		return finished, nil
	}
	r := finished[0]
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), q.opts.SendTimeout)
	defer cancel()
	_, err := q.c.RoomOptions(cctx, r.Room)
	if errors.Is(err, ErrNoRoom) {
		// Either the channel was deleted (nothing to post into any more)
		// or ejabberd stopped the room under the post (a stopping
		// ejabberd still answers on open connections after its rooms are
		// gone, and drops what is routed to them): the channel decides.
		q.nicks.forget(r.Room) // a room started again has the nick it had stored
		gone, cerr := q.channelGone(cctx, r)
		switch {
		case cerr != nil:
			err = cerr
		case gone:
			return finished, nil
		}
	}
	if err == nil {
		return finished, nil
	}
	delay := min(q.opts.RetryMin<<min(r.Attempts, 16), q.opts.RetryMax)
	return nil, &failure{row: r, err: fmt.Errorf("confirm posts: %w", err), at: time.Now().Add(delay)}
}

// channelGone reports whether a row's channel, or its tenant, no longer
// exists.
func (q *Queue) channelGone(ctx context.Context, r queued) (bool, error) {
	o, err := q.st.Tenant(ctx, r.Tenant)
	if errors.Is(err, models.ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	exists, err := q.st.ChatChannelExists(ctx, o, r.Channel)
	return !exists, err
}

// refusedForGood reports an answer that no retry can change: ejabberd
// parsed the request and found the stanza itself wrong (400), or ran the
// command and it answered a failure code. Everything
// else is tried again: a 404 "Endpoint not found." is what a starting
// ejabberd answers before its modules have registered send_stanza (its
// listeners are up first), and a 401/403 is an operator's permission
// mistake; dropping an accepted message for either would lose it.
func refusedForGood(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && (ae.Status == http.StatusBadRequest || ae.Status == http.StatusOK)
}

// record deletes finished rows, records the chat.message events of the
// posted ones and schedules failed ones, in one transaction (retried
// briefly: should it fail, the rows are posted again).
func (q *Queue) record(ctx context.Context, done []queued, failed []failure) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if err = q.st.WithEvents(ctx, func(tx models.Querier) ([]changes.Change, error) { return q.recordTx(ctx, tx, done, failed) }); err == nil {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 100 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("chat queue: record %d posted messages (they will be posted again): %w", len(done), err)
	}
	for _, f := range failed {
		q.opts.Logger.Info("chat message not posted; retrying", "room", f.row.Room, "id", f.row.StanzaID, "attempt", f.row.Attempts+1, "at", f.at, "error", f.err)
	}
	return nil
}

func (q *Queue) recordTx(ctx context.Context, tx models.Querier, done []queued, failed []failure) ([]changes.Change, error) {
	for _, f := range failed {
		if _, err := tx.ExecContext(ctx, `UPDATE chat_outbox SET attempts = attempts + 1, next_attempt_at = ?, last_error = ? WHERE id = ?`,
			models.FormatTime(f.at), truncate(f.err.Error(), 500), f.row.ID); err != nil {
			return nil, err
		}
	}
	if len(done) == 0 {
		return nil, nil
	}
	ids := make([]int64, 0, len(done))
	var evs []changes.Change
	for _, r := range done {
		ids = append(ids, r.ID)
		if r.Event == "" {
			continue
		}
		ev, err := models.NewEvent(eventType, r.Tenant, r.Channel, json.RawMessage(r.Event))
		if err != nil {
			return nil, err
		}
		evs = append(evs, ev)
	}
	query, args, err := tx.In(`DELETE FROM chat_outbox WHERE id IN (?)`, ids)
	if err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, query, args...); err != nil {
		return nil, err
	}
	return evs, nil
}

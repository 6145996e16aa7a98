package models

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/switchboard/switchboard/internal/changes"
)

// The transactional outbox (the store side). Every write through the store
// records what it changed in the same transaction as the change itself, so
// a change is in the outbox if and only if it committed. Ids come from the
// outbox_seq row, locked until commit: ids are therefore handed out in
// commit order without gaps, and a reader that has seen id N has seen every
// change committed before it. Package outbox delivers the rows.

// txStore is the store inside one write transaction, handed to hooks; it
// collects the changes the transaction makes.
type txStore struct {
	*Store
	tx      *sqlx.Tx
	changes []changes.Change
	// cloning is set while a tenant's objects are copied: references are
	// recorded as copied, without the existence check an API write gets.
	cloning bool
	// undo runs when the transaction does not commit (files a clone
	// copied).
	undo []func()
}

// commitHooks are told about every committed batch of changes.
type commitHooks struct {
	mu  sync.RWMutex
	fns []func(context.Context, []changes.Change)
	// appended are told that rows (configuration changes or events) were
	// committed to the outbox.
	appended []func()
}

// OnCommit registers fn to be called, on the writer's goroutine right after
// a commit, with the changes that transaction recorded (ids set). It is how
// the process wakes its dispatcher and invalidates caches before the
// writer's answer leaves; fn must return quickly.
func (s *Store) OnCommit(fn func(ctx context.Context, chs []changes.Change)) {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	s.hooks.fns = append(s.hooks.fns, fn)
}

// OnAppend registers fn to be called after every commit that appended rows
// to the outbox, configuration changes and events alike (waking the
// dispatcher); fn must return quickly.
func (s *Store) OnAppend(fn func()) {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	s.hooks.appended = append(s.hooks.appended, fn)
}

// committed tells the OnCommit hooks about the configuration changes among
// chs (events are no configuration) and the OnAppend hooks about any row.
func (s *Store) committed(ctx context.Context, chs []changes.Change) {
	ctx = context.WithoutCancel(ctx) // the change committed whatever the caller does now
	s.hooks.mu.RLock()
	defer s.hooks.mu.RUnlock()
	config := chs[:0:0]
	for _, c := range chs {
		if c.Op != changes.Event {
			config = append(config, c)
		}
	}
	if len(config) > 0 {
		for _, fn := range s.hooks.fns {
			fn(ctx, config)
		}
	}
	for _, fn := range s.hooks.appended {
		fn()
	}
}

// write runs fn in a transaction and appends the changes it recorded to the
// outbox before committing.
func (s *Store) write(ctx context.Context, fn func(ts *txStore) error) error {
	var recorded []changes.Change
	var undo []func()
	err := s.inTx(ctx, func(tx *sqlx.Tx) error {
		ts := &txStore{Store: s, tx: tx}
		defer func() { undo = append(undo, ts.undo...) }()
		if err := fn(ts); err != nil {
			return err
		}
		if IsDryRun(ctx) {
			return errDryRun
		}
		var err error
		if recorded, err = s.appendOutbox(ctx, tx, ts.changes); err != nil {
			return err
		}
		return s.recordIdempotent(ctx, tx, recorded)
	})
	if err == nil && len(recorded) > 0 {
		s.committed(ctx, recorded)
	}
	if errors.Is(err, errDryRun) {
		for _, u := range undo {
			u()
		}
		return nil
	}
	if err != nil {
		for _, u := range undo {
			u()
		}
		var le *LimitError
		if errors.As(err, &le) && !IsDryRun(ctx) {
			if nerr := s.noteLimit(ctx, le); nerr != nil {
				slog.Default().ErrorContext(ctx, "recording a reached limit failed", "limit", le.Limit, "tenant", le.Tenant, "error", nerr)
			}
		}
	}
	return err
}

// record notes one changed object. before and after are rows as read from
// the table; what a client would not see (secrets) is removed here.
func (ts *txStore) record(res *Resource, o Owner, op changes.Op, key string, before, after Record) error {
	c := changes.Change{Resource: res.Name, Op: op, Key: key, At: time.Now().UTC()}
	switch {
	case res == tenantsResource:
		c.Tenant = key
	case res.Scope == TenantScope:
		c.Tenant = o.Tenant
	}
	var err error
	if c.Before, err = ts.publicJSON(res, o, before); err != nil {
		return err
	}
	if c.After, err = ts.publicJSON(res, o, after); err != nil {
		return err
	}
	ts.changes = append(ts.changes, c)
	return nil
}

// publicJSON is rec as the API shows it, or nil.
func (s *Store) publicJSON(res *Resource, o Owner, rec Record) (json.RawMessage, error) {
	if rec == nil {
		return nil, nil
	}
	cp := make(Record, len(rec))
	for k, v := range rec {
		cp[k] = v
	}
	s.output(res, o, cp)
	b, err := json.Marshal(cp)
	if err != nil {
		return nil, fmt.Errorf("outbox: encode %s: %w", res.Name, err)
	}
	return b, nil
}

// appendOutbox writes chs with ids from the locked sequence row.
func (s *Store) appendOutbox(ctx context.Context, tx *sqlx.Tx, chs []changes.Change) ([]changes.Change, error) {
	if len(chs) == 0 {
		return nil, nil
	}
	var next int64
	if err := tx.GetContext(ctx, &next, "SELECT next_id FROM outbox_seq WHERE name = 'outbox'"+s.dialect.forUpdate()); err != nil {
		return nil, fmt.Errorf("outbox sequence: %w", s.dialect.translate(err))
	}
	if _, err := tx.ExecContext(ctx, "UPDATE outbox_seq SET next_id = ? WHERE name = 'outbox'", next+int64(len(chs))); err != nil {
		return nil, fmt.Errorf("outbox sequence: %w", s.dialect.translate(err))
	}
	// One multi-row INSERT per 500 changes: a write of many objects (a
	// tenant clone, a batch of events) costs few round trips.
	for start := 0; start < len(chs); start += 500 {
		part := chs[start:min(start+500, len(chs))]
		q := "INSERT INTO outbox (id, resource, op, tenant, obj_key, before_json, after_json, created_at) VALUES " +
			strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?), ", len(part)), ", ")
		args := make([]any, 0, 8*len(part))
		for i := range part {
			c := &part[i]
			c.ID = next + int64(start+i)
			args = append(args, c.ID, c.Resource, string(c.Op), c.Tenant, c.Key, nullJSON(c.Before), nullJSON(c.After), FormatTime(c.At))
		}
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return nil, fmt.Errorf("outbox: %w", s.dialect.translate(err))
		}
	}
	return chs, nil
}

func nullJSON(b json.RawMessage) any {
	if b == nil {
		return nil
	}
	return string(b)
}

type outboxRow struct {
	ID       int64          `db:"id"`
	Resource string         `db:"resource"`
	Op       string         `db:"op"`
	Tenant   string         `db:"tenant"`
	Key      string         `db:"obj_key"`
	Before   sql.NullString `db:"before_json"`
	After    sql.NullString `db:"after_json"`
	At       string         `db:"created_at"`
}

// OutboxAfter returns up to limit changes with ids above after, in order.
func (s *Store) OutboxAfter(ctx context.Context, after int64, limit int) ([]changes.Change, error) {
	var rows []outboxRow
	if err := s.db.SelectContext(ctx, &rows, "SELECT id, resource, op, tenant, obj_key, before_json, after_json, created_at FROM outbox WHERE id > ? ORDER BY id LIMIT ?", after, limit); err != nil {
		return nil, fmt.Errorf("read outbox: %w", s.dialect.translate(err))
	}
	out := make([]changes.Change, len(rows))
	for i, r := range rows {
		at, _ := time.Parse(timeLayout, r.At)
		out[i] = changes.Change{ID: r.ID, Resource: r.Resource, Op: changes.Op(r.Op), Tenant: r.Tenant, Key: r.Key, At: at}
		if r.Before.Valid {
			out[i].Before = json.RawMessage(r.Before.String)
		}
		if r.After.Valid {
			out[i].After = json.RawMessage(r.After.String)
		}
	}
	return out, nil
}

// OutboxUpdatesAfter returns the updates of the named resources with ids
// above after, in order: what a subscriber handling older changes needs to
// know of objects written since (their before images).
func (s *Store) OutboxUpdatesAfter(ctx context.Context, after int64, resources []string) ([]changes.Change, error) {
	if len(resources) == 0 {
		return nil, nil
	}
	q, args, err := sqlx.In("SELECT id, resource, op, tenant, obj_key, before_json, after_json, created_at FROM outbox WHERE id > ? AND op = ? AND resource IN (?) ORDER BY id", after, string(changes.Update), resources)
	if err != nil {
		return nil, fmt.Errorf("read outbox updates: %w", err)
	}
	var rows []outboxRow
	if err := s.db.SelectContext(ctx, &rows, s.db.Rebind(q), args...); err != nil {
		return nil, fmt.Errorf("read outbox updates: %w", s.dialect.translate(err))
	}
	out := make([]changes.Change, len(rows))
	for i, r := range rows {
		out[i] = changes.Change{ID: r.ID, Resource: r.Resource, Op: changes.Op(r.Op), Tenant: r.Tenant, Key: r.Key}
		if r.Before.Valid {
			out[i].Before = json.RawMessage(r.Before.String)
		}
	}
	return out, nil
}

// OutboxHead is the id of the last committed change (0 for none).
func (s *Store) OutboxHead(ctx context.Context) (int64, error) {
	var next int64
	if err := s.db.GetContext(ctx, &next, "SELECT next_id FROM outbox_seq WHERE name = 'outbox'"); err != nil {
		return 0, fmt.Errorf("outbox head: %w", s.dialect.translate(err))
	}
	return next - 1, nil
}

// OutboxScopesAfter returns the scopes (lower-case tenants, "" for the
// platform) of every change with an id above after, for a cache that knew
// everything up to after and must tell what moved since. complete is
// false when it cannot be told: changes after after were pruned already,
// or the outbox is behind after (another or a restored database).
func (s *Store) OutboxScopesAfter(ctx context.Context, after int64) (scopes map[string]bool, complete bool, err error) {
	head, err := s.OutboxHead(ctx)
	if err != nil {
		return nil, false, err
	}
	if head < after {
		return nil, false, nil
	}
	var rows []struct {
		Tenant string `db:"tenant"`
		Low    int64  `db:"low"`
	}
	// Ids are handed out without gaps (outbox_seq), so the changes after
	// after are all there when the lowest one is after+1.
	if err := s.db.SelectContext(ctx, &rows, "SELECT tenant, MIN(id) AS low FROM outbox WHERE id > ? GROUP BY tenant", after); err != nil {
		return nil, false, fmt.Errorf("outbox scopes: %w", s.dialect.translate(err))
	}
	scopes = make(map[string]bool, len(rows))
	low := head + 1
	for _, r := range rows {
		scopes[strings.ToLower(r.Tenant)] = true
		low = min(low, r.Low)
	}
	return scopes, low == after+1 || head == after, nil
}

// OutboxHeads returns, per tenant ("" for platform changes), the highest
// change id above after still in the outbox, and the highest id overall.
func (s *Store) OutboxHeads(ctx context.Context, after int64) (map[string]int64, int64, error) {
	var rows []struct {
		Tenant string `db:"tenant"`
		ID     int64  `db:"id"`
	}
	if err := s.db.SelectContext(ctx, &rows, "SELECT tenant, MAX(id) AS id FROM outbox WHERE id > ? GROUP BY tenant", after); err != nil {
		return nil, 0, fmt.Errorf("outbox heads: %w", s.dialect.translate(err))
	}
	out := make(map[string]int64, len(rows))
	top := after
	for _, r := range rows {
		out[strings.ToLower(r.Tenant)] = r.ID
		top = max(top, r.ID)
	}
	return out, top, nil
}

// OutboxProgress returns a subscriber's last delivered id; a subscriber
// seen for the first time starts at the current head (it is not sent the
// history it was not there for).
func (s *Store) OutboxProgress(ctx context.Context, subscriber string) (int64, error) {
	head, err := s.OutboxHead(ctx)
	if err != nil {
		return 0, err
	}
	if _, err := s.db.ExecContext(ctx, s.dialect.insertIgnore()+" INTO outbox_progress (subscriber, last_id, updated_at) VALUES (?, ?, ?)", subscriber, head, now()); err != nil {
		return 0, fmt.Errorf("outbox progress %s: %w", subscriber, s.dialect.translate(err))
	}
	var last int64
	if err := s.db.GetContext(ctx, &last, "SELECT last_id FROM outbox_progress WHERE subscriber = ?", subscriber); err != nil {
		return 0, fmt.Errorf("outbox progress %s: %w", subscriber, s.dialect.translate(err))
	}
	return last, nil
}

// SetOutboxProgress records that a subscriber handled every change up to id.
func (s *Store) SetOutboxProgress(ctx context.Context, subscriber string, id int64) error {
	if _, err := s.db.ExecContext(ctx, "UPDATE outbox_progress SET last_id = ?, attempts = 0, last_error = '', updated_at = ? WHERE subscriber = ? AND last_id < ?", id, now(), subscriber, id); err != nil {
		return fmt.Errorf("outbox progress %s: %w", subscriber, s.dialect.translate(err))
	}
	return nil
}

// NoteOutboxFailure records a failed delivery attempt (for operators).
func (s *Store) NoteOutboxFailure(ctx context.Context, subscriber string, cause error) error {
	msg := cause.Error()
	if len(msg) > 500 {
		msg = msg[:500]
	}
	if _, err := s.db.ExecContext(ctx, "UPDATE outbox_progress SET attempts = attempts + 1, last_error = ?, updated_at = ? WHERE subscriber = ?", msg, now(), subscriber); err != nil {
		return fmt.Errorf("outbox progress %s: %w", subscriber, s.dialect.translate(err))
	}
	return nil
}

// OutboxDepth is how many committed changes some subscriber among subs has
// not handled yet (the slowest one's backlog).
func (s *Store) OutboxDepth(ctx context.Context, subs []string) (int64, error) {
	head, err := s.OutboxHead(ctx)
	if err != nil || len(subs) == 0 {
		return 0, err
	}
	q, args, err := sqlx.In("SELECT COALESCE(MIN(last_id), -1) FROM outbox_progress WHERE subscriber IN (?)", subs)
	if err != nil {
		return 0, err
	}
	var low int64
	if err := s.db.GetContext(ctx, &low, q, args...); err != nil {
		return 0, fmt.Errorf("outbox depth: %w", s.dialect.translate(err))
	}
	if low < 0 {
		return 0, nil
	}
	return max(head-low, 0), nil
}

// PruneOutbox deletes changes that every subscriber in subs (the ones
// this release delivers to; a removed subscriber no longer holds rows back)
// has handled and that are older than keep, so replicas that poll the
// outbox see every change before it goes.
func (s *Store) PruneOutbox(ctx context.Context, subs []string, keep time.Duration) (int64, error) {
	if len(subs) == 0 {
		return 0, nil
	}
	q, args, err := sqlx.In("SELECT MIN(last_id) FROM outbox_progress WHERE subscriber IN (?)", subs)
	if err != nil {
		return 0, err
	}
	var low sql.NullInt64
	if err := s.db.GetContext(ctx, &low, q, args...); err != nil {
		return 0, fmt.Errorf("prune outbox: %w", s.dialect.translate(err))
	}
	if !low.Valid {
		return 0, nil
	}
	r, err := s.db.ExecContext(ctx, "DELETE FROM outbox WHERE id <= ? AND created_at < ?", low.Int64, FormatTime(time.Now().Add(-keep)))
	if err != nil {
		return 0, fmt.Errorf("prune outbox: %w", s.dialect.translate(err))
	}
	return r.RowsAffected()
}

// TakeOutboxLease takes or renews the named lease for holder for ttl,
// using the database's clock so replicas' clocks need not agree. It
// reports whether holder has it.
func (s *Store) TakeOutboxLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	if _, err := s.db.ExecContext(ctx, s.dialect.insertIgnore()+" INTO outbox_leases (name, holder, expires_ms) VALUES (?, '', 0)", name); err != nil {
		return false, fmt.Errorf("outbox lease: %w", s.dialect.translate(err))
	}
	nowMS := s.dialect.nowMillis()
	if _, err := s.db.ExecContext(ctx, "UPDATE outbox_leases SET holder = ?, expires_ms = "+nowMS+" + ? WHERE name = ? AND (holder = ? OR expires_ms < "+nowMS+")",
		holder, ttl.Milliseconds(), name, holder); err != nil {
		return false, fmt.Errorf("outbox lease: %w", s.dialect.translate(err))
	}
	var got string
	if err := s.db.GetContext(ctx, &got, "SELECT holder FROM outbox_leases WHERE name = ?", name); err != nil {
		return false, fmt.Errorf("outbox lease: %w", s.dialect.translate(err))
	}
	return got == holder, nil
}

// ReleaseOutboxLease gives the lease up so another replica takes over at once.
func (s *Store) ReleaseOutboxLease(ctx context.Context, name, holder string) error {
	if _, err := s.db.ExecContext(ctx, "UPDATE outbox_leases SET holder = '', expires_ms = 0 WHERE name = ? AND holder = ?", name, holder); err != nil {
		return fmt.Errorf("outbox lease: %w", s.dialect.translate(err))
	}
	return nil
}

// changeKey is the key a change names for res's object rec.
func changeKey(res *Resource, rec Record) string {
	if res.Singleton {
		return res.Name
	}
	switch v := rec[res.KeyField()].(type) {
	case int64:
		return strconv.FormatInt(v, 10)
	default:
		return fmt.Sprint(v)
	}
}

package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/switchboard/switchboard/internal/changes"
)

// IdempotentWrite asks the store to record a configuration write's answer
// under a key in the write's own transaction (see WithIdempotency).
type IdempotentWrite struct {
	Key  string // a hash of the credential and the client's Idempotency-Key
	Hash string // a hash of the request (method, path, body)
	// Collection is the collection's URL with a trailing slash (creates
	// only): the replayed Location is it and the created object's key.
	Collection string
}

// IdempotentAnswer is a stored answer, replayed to a retry.
type IdempotentAnswer struct {
	Hash     string `db:"request_hash"`
	Status   int    `db:"status"`
	Location string `db:"location"`
	Body     []byte `db:"body"`
}

// ErrIdempotencyRace means another request with the same key committed
// first: the caller reads its answer (IdempotentAnswerFor) and replays it.
var ErrIdempotencyRace = errors.New("a request with this idempotency key was applied meanwhile")

// idempotencyTTL is how long an answer is kept for retries.
const idempotencyTTL = 24 * time.Hour

type idemKey struct{}

// WithIdempotency makes the next write through ctx store its answer under
// w.Key (an error, and no write, when the key is taken meanwhile).
func WithIdempotency(ctx context.Context, w *IdempotentWrite) context.Context {
	return context.WithValue(ctx, idemKey{}, w)
}

// IdempotentAnswerFor returns the answer stored under key (ErrNotFound
// when none, or when it is older than a day).
func (s *Store) IdempotentAnswerFor(ctx context.Context, key string) (IdempotentAnswer, error) {
	var a IdempotentAnswer
	err := s.db.GetContext(ctx, &a, "SELECT request_hash, status, location, body FROM idempotency_keys WHERE id_key = ? AND created_at > ?",
		key, FormatTime(time.Now().Add(-idempotencyTTL)))
	if err != nil {
		return a, fmt.Errorf("idempotency key: %w", s.dialect.translate(err))
	}
	return a, nil
}

// recordIdempotent stores the answer of the write whose changes are chs,
// when ctx asks for it: 201 with the created object, 200 with the updated
// one (as a GET shows them: secrets are shown once, by the first answer
// only), 204 for a delete.
func (s *Store) recordIdempotent(ctx context.Context, tx *sqlx.Tx, chs []changes.Change) error {
	w, _ := ctx.Value(idemKey{}).(*IdempotentWrite)
	if w == nil || len(chs) == 0 {
		return nil
	}
	main := chs[0]
	status, body := 200, sql.NullString{String: string(main.After), Valid: main.After != nil}
	switch main.Op {
	case changes.Create:
		status = 201
	case changes.Delete:
		status, body = 204, sql.NullString{}
	}
	location := ""
	if main.Op == changes.Create && w.Collection != "" {
		location = w.Collection + url.PathEscape(main.Key)
	}
	now := time.Now()
	if _, err := tx.ExecContext(ctx, "DELETE FROM idempotency_keys WHERE created_at < ?", FormatTime(now.Add(-idempotencyTTL))); err != nil {
		return fmt.Errorf("idempotency key: prune: %w", s.dialect.translate(err))
	}
	_, err := tx.ExecContext(ctx, "INSERT INTO idempotency_keys (id_key, request_hash, status, location, body, created_at) VALUES (?, ?, ?, ?, ?, ?)",
		w.Key, w.Hash, status, location, body, FormatTime(now))
	if err != nil {
		if errors.Is(s.dialect.translate(err), ErrConflict) {
			return ErrIdempotencyRace
		}
		return fmt.Errorf("idempotency key: %w", s.dialect.translate(err))
	}
	return nil
}

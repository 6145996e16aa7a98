package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// Querier runs SQL on the store's database for the packages that keep
// tables of their own (media, fax, chat's and messaging's outboxes,
// webhook deliveries, node states, the XML renderer's typed loader). It is
// the only handle on the database outside this package: Store.Querier
// gives one on the pool, Store.InTx and Store.WithEvents one inside a
// transaction.
//
// Every error it returns went through the store's dialect translation
// once: no rows is ErrNotFound, a unique violation a *ConflictError
// (ErrConflict), a foreign-key violation ErrReferenced or a
// *ValidationError. A cancelled or expired context is returned as it is;
// any other database failure is wrapped as "database: ..." and answers
// 500 "internal error" at the HTTP layer, so driver text reaches the logs
// only (the wrapped driver error stays visible to errors.As, which is how
// the store's transactions recognise a deadlock worth a retry). Callers add their own context ("list recordings:
// ...") and compare with errors.Is against the store's sentinels, never
// against driver errors.
//
// Placeholders are "?" on both dialects. A Querier is a small value, safe
// to copy; one from a transaction must not outlive the function it was
// handed to. The zero Querier is not usable.
type Querier struct {
	x sqlx.ExtContext // the pool (*sqlx.DB) or one transaction (*sqlx.Tx)
	d Dialect
}

// Querier returns a querier on the store's connection pool.
func (s *Store) Querier() Querier { return Querier{x: s.db, d: s.dialect} }

// txQuerier returns a querier inside tx.
func (s *Store) txQuerier(tx *sqlx.Tx) Querier { return Querier{x: tx, d: s.dialect} }

// Dialect reports which SQL dialect the querier's database speaks.
func (q Querier) Dialect() Dialect { return q.d }

// fail translates a driver error once (see Querier).
func (q Querier) fail(err error) error {
	if err == nil {
		return nil
	}
	if t, ok := q.d.translateKnown(err); ok {
		return t
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("database: %w", err)
}

// GetContext reads the one row query selects into dest (a struct with db
// tags, or a scalar for one column); no row is ErrNotFound.
func (q Querier) GetContext(ctx context.Context, dest any, query string, args ...any) error {
	return q.fail(sqlx.GetContext(ctx, q.x, dest, query, args...))
}

// SelectContext reads every row query selects into dest (a pointer to a
// slice of structs with db tags, or of scalars for one column).
func (q Querier) SelectContext(ctx context.Context, dest any, query string, args ...any) error {
	return q.fail(sqlx.SelectContext(ctx, q.x, dest, query, args...))
}

// ExecContext runs a statement that returns no rows.
func (q Querier) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	res, err := q.x.ExecContext(ctx, query, args...)
	if err != nil {
		return nil, q.fail(err)
	}
	return result{res, q}, nil
}

// QueryContext runs query and returns its rows for scanning one at a
// time (GetContext and SelectContext fit most reads better).
func (q Querier) QueryContext(ctx context.Context, query string, args ...any) (*Rows, error) {
	rows, err := q.x.QueryxContext(ctx, query, args...)
	if err != nil {
		return nil, q.fail(err)
	}
	return &Rows{rows: rows, q: q}, nil
}

// QueryRowContext runs a query that selects at most one row, for Scan
// (no row is ErrNotFound then).
func (q Querier) QueryRowContext(ctx context.Context, query string, args ...any) *Row {
	return &Row{row: q.x.QueryRowxContext(ctx, query, args...), q: q}
}

// Rebind turns the "?" placeholders of query into the dialect's own (both
// dialects use "?" today; kept so queries need not know).
func (q Querier) Rebind(query string) string { return q.x.Rebind(query) }

// In expands each slice argument of query into one placeholder per item
// ("id IN (?)" with []int64{1, 2} becomes "id IN (?, ?)") and rebinds the
// result; an empty slice is an error.
func (q Querier) In(query string, args ...any) (string, []any, error) {
	query, args, err := sqlx.In(query, args...)
	if err != nil {
		return "", nil, fmt.Errorf("expand query arguments: %w", err)
	}
	return q.x.Rebind(query), args, nil
}

// PrepareContext prepares query for repeated use; Close releases it. A
// statement prepared on the pool is used inside a transaction through
// Querier.Stmt.
func (q Querier) PrepareContext(ctx context.Context, query string) (*Stmt, error) {
	p, ok := q.x.(interface {
		PreparexContext(context.Context, string) (*sqlx.Stmt, error)
	})
	if !ok {
		return nil, errors.New("database: this querier cannot prepare statements")
	}
	st, err := p.PreparexContext(ctx, query)
	if err != nil {
		return nil, q.fail(err)
	}
	return &Stmt{st: st, q: q}, nil
}

// Stmt returns s bound to q: inside a transaction, the transaction's copy
// of a statement prepared on the pool; on the pool, s itself.
func (q Querier) Stmt(ctx context.Context, s *Stmt) *Stmt {
	tx, ok := q.x.(*sqlx.Tx)
	if !ok {
		return s
	}
	return &Stmt{st: tx.StmtxContext(ctx, s.st), q: q}
}

// InTx runs fn in a transaction, committing when it returns nil. A
// deadlock or Galera certification failure runs fn again (up to a few
// times), so fn must not have effects outside the transaction that cannot
// be repeated.
func (s *Store) InTx(ctx context.Context, fn func(q Querier) error) error {
	return s.inTx(ctx, func(tx *sqlx.Tx) error { return fn(s.txQuerier(tx)) })
}

// Stmt is a prepared statement (Querier.PrepareContext); its errors are
// translated as the querier's.
type Stmt struct {
	st *sqlx.Stmt
	q  Querier
}

// ExecContext runs the statement with args.
func (s *Stmt) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	res, err := s.st.ExecContext(ctx, args...)
	if err != nil {
		return nil, s.q.fail(err)
	}
	return result{res, s.q}, nil
}

// QueryContext runs the statement with args and returns its rows.
func (s *Stmt) QueryContext(ctx context.Context, args ...any) (*Rows, error) {
	rows, err := s.st.QueryxContext(ctx, args...)
	if err != nil {
		return nil, s.q.fail(err)
	}
	return &Rows{rows: rows, q: s.q}, nil
}

// Close releases the statement.
func (s *Stmt) Close() error { return s.q.fail(s.st.Close()) }

// Rows is the result of a query read one row at a time; its errors are
// translated as the querier's. Close it when done (Next returning false
// closes it too).
type Rows struct {
	rows *sqlx.Rows
	q    Querier
}

// Next prepares the next row for Scan, reporting whether there is one.
func (r *Rows) Next() bool { return r.rows.Next() }

// Scan copies the current row's columns into dest, in order.
func (r *Rows) Scan(dest ...any) error { return r.q.fail(r.rows.Scan(dest...)) }

// MapScan copies the current row into dest, by column name.
func (r *Rows) MapScan(dest map[string]any) error { return r.q.fail(r.rows.MapScan(dest)) }

// Err is the error that ended the iteration, if any.
func (r *Rows) Err() error { return r.q.fail(r.rows.Err()) }

// Close releases the rows.
func (r *Rows) Close() error { return r.q.fail(r.rows.Close()) }

// Row is the result of Querier.QueryRowContext.
type Row struct {
	row *sqlx.Row
	q   Querier
}

// Scan copies the row's columns into dest, in order; no row is ErrNotFound.
func (r *Row) Scan(dest ...any) error { return r.q.fail(r.row.Scan(dest...)) }

// result translates the errors of a statement's outcome.
type result struct {
	res sql.Result
	q   Querier
}

func (r result) LastInsertId() (int64, error) {
	id, err := r.res.LastInsertId()
	return id, r.q.fail(err)
}

func (r result) RowsAffected() (int64, error) {
	n, err := r.res.RowsAffected()
	return n, r.q.fail(err)
}

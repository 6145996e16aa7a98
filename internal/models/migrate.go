package models

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"
	"strconv"
	"strings"

	schema "github.com/switchboard/switchboard/internal/models/sql"
)

// Migration is one numbered schema step.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations returns the dialect's migration files in order.
func Migrations(d Dialect) ([]Migration, error) {
	entries, err := fs.ReadDir(schema.Files, d.Name)
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var out []Migration
	for _, e := range entries {
		name := e.Name()
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || !strings.HasSuffix(name, ".sql") {
			return nil, fmt.Errorf("migration %s: name must be NNNN_name.sql", name)
		}
		body, err := fs.ReadFile(schema.Files, d.Name+"/"+name)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", name, err)
		}
		out = append(out, Migration{Version: v, Name: name, SQL: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %s: expected version %d", m.Name, i+1)
		}
	}
	return out, nil
}

// Migrate applies every migration not yet applied. Two replicas starting
// together serialise on a database lock (MySQL GET_LOCK; SQLite's write
// lock through an immediate transaction), and every step is re-runnable,
// so running it twice or concurrently is safe.
func (s *Store) Migrate(ctx context.Context) error {
	migs, err := Migrations(s.dialect)
	if err != nil {
		return err
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Close()
	if !s.dialect.SQLite {
		var got sql.NullInt64
		// The lock only spares concurrent replicas duplicate work: on
		// Galera it is local to one node (or refused), and correctness never
		// depends on it, since every step is re-runnable and recorded with
		// INSERT IGNORE. So a refused lock is logged, not fatal.
		err := conn.QueryRowContext(ctx, "SELECT GET_LOCK('switchboard_migrate', 120)").Scan(&got)
		switch {
		case err != nil:
			slog.WarnContext(ctx, "migrate: no database lock; relying on re-runnable steps", "error", err)
		case got.Int64 != 1:
			return fmt.Errorf("migrate: another replica held the migration lock for 120 s")
		default:
			defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT RELEASE_LOCK('switchboard_migrate')") //nolint:errcheck
		}
	}
	create := "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER NOT NULL PRIMARY KEY, name VARCHAR(128) NOT NULL, applied_at VARCHAR(32) NOT NULL)"
	if _, err := conn.ExecContext(ctx, create); err != nil {
		return fmt.Errorf("migrate: create schema_migrations: %w", err)
	}
	for _, m := range migs {
		if err := withRetry(ctx, func() error { return s.applyMigration(ctx, conn, m) }); err != nil {
			return err
		}
	}
	return s.runPendingSteps(ctx)
}

func (s *Store) applyMigration(ctx context.Context, conn *sql.Conn, m Migration) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate %s: %w", m.Name, err)
	}
	defer tx.Rollback() //nolint:errcheck
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM schema_migrations WHERE version = ?", m.Version).Scan(&n); err != nil {
		return fmt.Errorf("migrate %s: %w", m.Name, err)
	}
	if n > 0 {
		return nil
	}
	// MySQL commits DDL implicitly, so each file is written to be re-runnable;
	// on SQLite the whole step is one transaction.
	for _, stmt := range splitStatements(m.SQL) {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("migrate %s: %w", m.Name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, s.dialect.insertIgnore()+" INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", m.Version, m.Name, now()); err != nil {
		return fmt.Errorf("migrate %s: record: %w", m.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migrate %s: commit: %w", m.Name, err)
	}
	slog.InfoContext(ctx, "schema migration applied", "version", m.Version, "name", m.Name)
	return nil
}

// splitStatements splits a migration file on semicolons that end a line;
// migration files are ours, so no statement hides one inside a string.
func splitStatements(src string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "--") || trimmed == "" {
			continue
		}
		cur.WriteString(line + "\n")
		if strings.HasSuffix(trimmed, ";") {
			out = append(out, strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"))
			cur.Reset()
		}
	}
	if strings.TrimSpace(cur.String()) != "" {
		out = append(out, cur.String())
	}
	return out
}

// SchemaCurrent reports whether every migration is applied; serve refuses
// to run against a schema that is behind.
func (s *Store) SchemaCurrent(ctx context.Context) error {
	migs, err := Migrations(s.dialect)
	if err != nil {
		return err
	}
	var v sql.NullInt64
	if err := s.db.GetContext(ctx, &v, "SELECT MAX(version) FROM schema_migrations"); err != nil {
		return fmt.Errorf("schema version: %w", err)
	}
	if int(v.Int64) < len(migs) {
		return fmt.Errorf("database schema is at version %d, this binary needs %d: run `switchboard migrate`", v.Int64, len(migs))
	}
	return nil
}

// pendingSteps are the data steps migrations leave for Go code, by the
// name a migration inserts into pending_steps.
var pendingSteps = map[string]func(ctx context.Context, ts *txStore) error{
	"backfill_refs": func(ctx context.Context, ts *txStore) error { return ts.backfillReferences(ctx) },
	"backfill_contact_phones": func(ctx context.Context, ts *txStore) error {
		return ts.backfillContactPhones(ctx)
	},
}

// runPendingSteps runs each pending step in one transaction with the
// deletion of its row.
func (s *Store) runPendingSteps(ctx context.Context) error {
	var names []string
	if err := s.db.SelectContext(ctx, &names, "SELECT name FROM pending_steps ORDER BY name"); err != nil {
		return fmt.Errorf("migrate: pending steps: %w", s.dialect.translate(err))
	}
	for _, name := range names {
		step := pendingSteps[name]
		if step == nil {
			return fmt.Errorf("migrate: unknown pending step %q", name)
		}
		err := s.write(ctx, func(ts *txStore) error {
			r, err := ts.tx.ExecContext(ctx, "DELETE FROM pending_steps WHERE name = ?", name)
			if err != nil {
				return s.dialect.translate(err)
			}
			if n, _ := r.RowsAffected(); n == 0 {
				return nil // another replica did it
			}
			return step(ctx, ts)
		})
		if err != nil {
			return fmt.Errorf("migrate: step %s: %w", name, err)
		}
		slog.InfoContext(ctx, "schema data step done", "step", name)
	}
	return nil
}

package models_test

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// TestQuerierTranslatesErrors: what the querier answers is the store's
// errors, never a driver's: no row is ErrNotFound, a duplicate key a
// *ConflictError naming no column or driver text, anything else "database: ...".
func TestQuerierTranslatesErrors(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := t.Context()
		q := st.Querier()
		node := storetest.Name("node")

		var up int
		if err := q.GetContext(ctx, &up, "SELECT server_up FROM node_states WHERE node = ?", node); err != models.ErrNotFound {
			t.Fatalf("missing row: %v, want ErrNotFound", err)
		}
		if err := q.QueryRowContext(ctx, "SELECT server_up FROM node_states WHERE node = ?", node).Scan(&up); err != models.ErrNotFound {
			t.Fatalf("missing row (QueryRowContext): %v, want ErrNotFound", err)
		}
		if _, err := q.ExecContext(ctx, "INSERT INTO node_states (node) VALUES (?)", node); err != nil {
			t.Fatal(err)
		}
		_, err := q.ExecContext(ctx, "INSERT INTO node_states (node) VALUES (?)", node)
		var ce *models.ConflictError
		if !errors.As(err, &ce) || !errors.Is(err, models.ErrConflict) {
			t.Fatalf("duplicate key: %v, want a *ConflictError", err)
		}
		if !strings.HasSuffix(ce.Msg, "already exists") || strings.Contains(ce.Msg, node) || strings.Contains(ce.Msg, "node_states") || strings.Contains(strings.ToLower(ce.Msg), "constraint") {
			t.Errorf("duplicate key message %q, want the key without driver text", ce.Msg)
		}
		err = q.SelectContext(ctx, &[]int{}, "SELECT no_such_column FROM node_states")
		if err == nil || !strings.HasPrefix(err.Error(), "database: ") || errors.Is(err, models.ErrNotFound) {
			t.Errorf("bad query: %v, want a wrapped database error", err)
		}
	})
}

// TestQuerierTransactionsAndStatements: InTx commits what fn wrote when it
// returns nil and nothing otherwise; a statement prepared on the pool runs
// inside a transaction (Querier.Stmt); In expands a slice; rows scan one
// at a time.
func TestQuerierTransactionsAndStatements(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := t.Context()
		q := st.Querier()
		a, b, c := storetest.Name("qa"), storetest.Name("qb"), storetest.Name("qc")
		ins, err := q.PrepareContext(ctx, "INSERT INTO node_states (node) VALUES (?)")
		if err != nil {
			t.Fatal(err)
		}
		defer ins.Close()
		if err := st.InTx(ctx, func(tx models.Querier) error {
			for _, n := range []string{a, b} {
				if _, err := tx.Stmt(ctx, ins).ExecContext(ctx, n); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		refused := errors.New("refused")
		if err := st.InTx(ctx, func(tx models.Querier) error {
			if _, err := tx.ExecContext(ctx, "INSERT INTO node_states (node) VALUES (?)", c); err != nil {
				return err
			}
			return refused
		}); err != refused {
			t.Fatalf("InTx answered %v, want fn's error", err)
		}
		query, args, err := q.In("SELECT node FROM node_states WHERE node IN (?) ORDER BY node", []string{a, b, c})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := q.QueryContext(ctx, query, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var got []string
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			got = append(got, n)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, ",") != a+","+b {
			t.Errorf("committed nodes %v, want %s and %s only (the refused transaction rolled back)", got, a, b)
		}
	})
}

// TestGatewayLedger: SetGiven replaces a node's fingerprints, Given reads
// them back.
func TestGatewayLedger(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := t.Context()
		l, node := st.GatewayLedger(), storetest.Name("node")
		for _, want := range []map[string]string{{"a": "1", "b": "2"}, {"b": "3"}, {}} {
			if err := l.SetGiven(ctx, node, want); err != nil {
				t.Fatal(err)
			}
			got, err := l.Given(ctx, node)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, want) {
				t.Errorf("given %v, want %v", got, want)
			}
		}
	})
}

package models

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
)

func openSQLite(t *testing.T) *Store {
	t.Helper()
	reg, err := NewRegistry(Resources)
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := NewSealer(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	st, err := Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "retry.db"), reg, sealer)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestTransactionsRetryDeadlocksAndCertificationFailures: a transaction
// that fails with MySQL 1213 (a deadlock, or a Galera certification
// failure) runs again from the start, its first attempt rolled back.
func TestTransactionsRetryDeadlocksAndCertificationFailures(t *testing.T) {
	st := openSQLite(t)
	ctx := context.Background()
	count := func() int {
		var n int
		if err := st.db.GetContext(ctx, &n, "SELECT COUNT(*) FROM schema_migrations WHERE version = 9999"); err != nil {
			t.Fatal(err)
		}
		return n
	}
	calls := 0
	err := st.inTx(ctx, func(tx *sqlx.Tx) error {
		calls++
		if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, 'retry', 'now')"); err != nil {
			return err
		}
		if calls == 1 {
			return &mysql.MySQLError{Number: 1213, Message: "WSREP detected deadlock/conflict and aborted the transaction. Try restarting the transaction"}
		}
		return nil
	})
	if err != nil || calls != 2 || count() != 1 {
		t.Fatalf("err %v after %d calls, %d rows; want success on the second call and one row", err, calls, count())
	}

	calls = 0
	err = st.inTx(ctx, func(*sqlx.Tx) error { calls++; return &mysql.MySQLError{Number: 1205} })
	if calls != txAttempts || !retryable(err) {
		t.Fatalf("a conflict that persists: %d calls (want %d), err %v", calls, txAttempts, err)
	}

	calls = 0
	other := errors.New("validation failed")
	if err := st.inTx(ctx, func(*sqlx.Tx) error { calls++; return other }); !errors.Is(err, other) || calls != 1 {
		t.Fatalf("other errors are not retried: %d calls, %v", calls, err)
	}
	if err := st.inTx(ctx, func(*sqlx.Tx) error { calls++; return &mysql.MySQLError{Number: 1062} }); err == nil || calls != 2 {
		t.Fatalf("a duplicate key is not retried: %d calls, %v", calls, err)
	}
}

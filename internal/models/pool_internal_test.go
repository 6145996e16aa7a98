package models

import (
	"context"
	"database/sql"
	"testing"
)

// Issue 28: a SQLite store closed two of its four connections after every
// burst that used all four (database/sql keeps two idle by default), and
// opened them again on the next, reading the schema and preparing every
// statement anew: a tenth of the CPU of the XML model builds after a
// restart. Connections used at once stay open for the next burst.
func TestSQLitePoolKeepsItsConnections(t *testing.T) {
	st := openSQLite(t)
	ctx := context.Background()
	for range 3 {
		var conns []*sql.Conn
		for range 4 {
			c, err := st.db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
		}
		for _, c := range conns {
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if s := st.db.Stats(); s.OpenConnections != 4 || s.MaxIdleClosed != 0 {
		t.Errorf("after three bursts of four: %d connections open, %d closed for want of idle room; want 4 and 0", s.OpenConnections, s.MaxIdleClosed)
	}
}

// Package storetest opens migrated stores for tests: always a fresh SQLite
// file, and also MySQL when SWITCHBOARD_TEST_MYSQL_URL is set (CI sets it).
// With CI set, an unreachable MySQL fails the test instead of skipping.
package storetest

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/dialplan"
	"github.com/switchboard/switchboard/models"
)

// Backend names a database a test runs against.
type Backend struct {
	Name string // "sqlite" or "mysql"
	URL  string
}

// Backends lists the databases available to this test run.
func Backends(t testing.TB) []Backend {
	t.Helper()
	out := []Backend{{Name: "sqlite", URL: "sqlite:" + filepath.Join(t.TempDir(), "test.db")}}
	if u := os.Getenv("SWITCHBOARD_TEST_MYSQL_URL"); u != "" {
		out = append(out, Backend{Name: "mysql", URL: u})
	}
	return out
}

// Key is a fixed test sealing key.
var Key = []byte("0123456789abcdef0123456789abcdef")

// Open opens and migrates a store on the backend, closed at cleanup.
func Open(t testing.TB, b Backend) *models.Store {
	t.Helper()
	reg, err := models.NewRegistry(models.Resources)
	if err != nil {
		t.Fatalf("registry: %v", err)
	}
	reg.SetRenderedDestinations(dialplan.RenderedDestinationTypes)
	sealer, err := models.NewSealer(Key)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := models.Open(ctx, b.URL, reg, sealer)
	if err != nil {
		if b.Name == "mysql" && os.Getenv("CI") == "" {
			t.Skipf("mysql unreachable: %v", err)
		}
		t.Fatalf("open %s: %v", b.Name, err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatalf("migrate %s: %v", b.Name, err)
	}
	return st
}

// Each runs fn as a subtest once per backend.
func Each(t *testing.T, fn func(t *testing.T, st *models.Store)) {
	t.Helper()
	for _, b := range Backends(t) {
		t.Run(b.Name, func(t *testing.T) { fn(t, Open(t, b)) })
	}
}

// Name returns a random tenant-safe name with a prefix, so tests sharing
// one MySQL database never collide.
func Name(prefix string) string {
	b := make([]byte, 5)
	_, _ = rand.Read(b)
	return strings.ToLower(fmt.Sprintf("%s_%x", prefix, b))
}

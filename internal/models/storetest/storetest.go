// Package storetest opens migrated stores for tests: always a fresh SQLite
// file, and also MySQL when SWITCHBOARD_TEST_MYSQL_URL is set (CI sets it).
// With CI set, an unreachable MySQL fails the test instead of skipping.
package storetest

import (
	"context"
	"crypto/rand"
	"fmt"
	neturl "net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard/switchboard/internal/freeswitch/dialplan"
	"github.com/switchboard/switchboard/internal/models"
)

// Backend names a database a test runs against.
type Backend struct {
	Name string // "sqlite" or "mysql"
	URL  string
}

// Backends lists the databases available to this test run.
//
// SWITCHBOARD_TEST_BACKENDS (a comma-separated list of backend names)
// keeps only the named ones: make test runs the race detector on MySQL and
// the SQLite runs without it (SQLite here is C translated to Go, which the
// race detector slows most and which holds no goroutines of ours).
func Backends(t testing.TB) []Backend {
	t.Helper()
	only := os.Getenv("SWITCHBOARD_TEST_BACKENDS")
	wanted := func(name string) bool {
		return only == "" || slices.Contains(strings.Split(only, ","), name)
	}
	var out []Backend
	if wanted("sqlite") {
		out = append(out, newSQLite(t))
	}
	if u := os.Getenv("SWITCHBOARD_TEST_MYSQL_URL"); u != "" && wanted("mysql") {
		out = append(out, Backend{Name: "mysql", URL: packageDatabase(t, u)})
	}
	if len(out) == 0 {
		t.Skipf("no test backend: SWITCHBOARD_TEST_BACKENDS=%q (mysql needs SWITCHBOARD_TEST_MYSQL_URL)", only)
	}
	return out
}

// PerBackendOnly reports a run that repeats, on other backends, what
// another run already did (SWITCHBOARD_TEST_PER_BACKEND_ONLY set: make
// test's SQLite pass beside its -race pass on MySQL). Tests that run on
// one backend of their choosing (SQLite, apptest.AnyEnv) skip in it.
func PerBackendOnly() bool { return os.Getenv("SWITCHBOARD_TEST_PER_BACKEND_ONLY") != "" }

// SQLite is a private, empty SQLite database whatever
// SWITCHBOARD_TEST_BACKENDS says, for a test that works with fixed names
// and so cannot share the package's MySQL database.
func SQLite(t testing.TB) Backend {
	t.Helper()
	if PerBackendOnly() {
		t.Skip("a test on one backend of its own: it ran in the other pass")
	}
	return newSQLite(t)
}

// newSQLite names a new SQLite file in the test's temporary directory.
func newSQLite(t testing.TB) Backend {
	return Backend{Name: "sqlite", URL: "sqlite:" + filepath.Join(t.TempDir(), "test.db")}
}

var (
	packageDBOnce sync.Once
	packageDBURL  string
)

// packageDatabase is the URL of this test binary's own MySQL database,
// named after the configured one and the package (switchboard_ci_routes,
// then _<SWITCHBOARD_TEST_DB_SUFFIX> when set),
// created on first use. go test runs packages at the same time; every test
// server dispatches all of its database's changes (webhooks, CRM activity,
// FreeSWITCH commands) to its own subscribers, so packages sharing one
// database delivered each other's events. Within a package, tests own
// their tenants.
func packageDatabase(t testing.TB, base string) string {
	t.Helper()
	packageDBOnce.Do(func() {
		packageDBURL = base
		u, err := neturl.Parse(base)
		if err != nil || strings.Trim(u.Path, "/") == "" {
			return
		}
		pkg := strings.TrimSuffix(filepath.Base(os.Args[0]), ".test")
		var name strings.Builder
		for _, r := range strings.ToLower(pkg) {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
				name.WriteRune(r)
			} else {
				name.WriteRune('_')
			}
		}
		db := strings.Trim(u.Path, "/") + "_" + name.String()
		// make test runs passes side by side (-race, the non-race tests,
		// the Redis Cluster pass); each names its own databases.
		if pass := os.Getenv("SWITCHBOARD_TEST_DB_SUFFIX"); pass != "" {
			db += "_" + pass
		}
		if len(db) > 64 {
			db = db[:64]
		}
		st, err := open(base)
		if err != nil {
			return // Open reports the unreachable server
		}
		defer st.Close()
		if _, err := st.Querier().ExecContext(context.Background(), "CREATE DATABASE IF NOT EXISTS `"+db+"`"); err != nil {
			return
		}
		u.Path = "/" + db
		packageDBURL = u.String()
	})
	return packageDBURL
}

// Key is a fixed test sealing key.
var Key = []byte("0123456789abcdef0123456789abcdef")

// Open opens and migrates a store on the backend, closed at cleanup. A new
// SQLite file starts as a copy of one migrated template per test process
// (Migrate then finds every step applied), since running every migration
// for each test costs most of a second under the race detector.
func Open(t testing.TB, b Backend) *models.Store {
	t.Helper()
	copied := false
	if b.Name == "sqlite" {
		var err error
		if copied, err = copySQLiteTemplate(b.URL); err != nil {
			t.Fatalf("sqlite template: %v", err)
		}
	}
	st, err := open(b.URL)
	if err != nil {
		if b.Name == "mysql" && os.Getenv("CI") == "" {
			t.Skipf("mysql unreachable: %v", err)
		}
		t.Fatalf("open %s: %v", b.Name, err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatalf("migrate %s: %v", b.Name, err)
	}
	if copied {
		// A copy of the template is a database of its own: an installation
		// of its own, as its own migration would have made it.
		if _, err := st.Querier().ExecContext(context.Background(), "UPDATE installation SET installation_id = lower(hex(randomblob(16)))"); err != nil {
			t.Fatalf("sqlite installation id: %v", err)
		}
	}
	return st
}

func open(url string) (*models.Store, error) {
	reg, err := models.NewRegistry(models.Resources)
	if err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	reg.SetRenderedDestinations(dialplan.RenderedDestinationTypes)
	sealer, err := models.NewSealer(Key)
	if err != nil {
		return nil, err
	}
	return models.Open(context.Background(), url, reg, sealer)
}

// sqliteTemplate is the file of a freshly migrated SQLite database, made
// once per test process.
var sqliteTemplate = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "storetest-template-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "template.db")
	st, err := open("sqlite:" + path)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, err
	}
	// Everything into the main file, so the file alone is the database.
	if _, err := st.Querier().ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		st.Close()
		return nil, err
	}
	if err := st.Close(); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
})

// copySQLiteTemplate writes the migrated template to the URL's file unless
// it exists already (a second store on the same database).
//
// It reports whether it made a copy (the file was not there yet).
func copySQLiteTemplate(url string) (bool, error) {
	path := strings.TrimPrefix(strings.TrimPrefix(url, "sqlite:"), "//")
	if _, err := os.Stat(path); err == nil {
		return false, nil
	}
	data, err := sqliteTemplate()
	if err != nil {
		return false, err
	}
	return true, os.WriteFile(path, data, 0o600)
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

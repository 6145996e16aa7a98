package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
	_ "modernc.org/sqlite" // pure-Go SQLite driver ("sqlite")

	"github.com/switchboard/switchboard/internal/platform/egress"
)

// Store is the database boundary: every query Switchboard runs goes
// through it, the store's own or, for packages with tables of their own,
// through the Querier it hands out (which translates driver errors). It
// is safe for concurrent use.
type Store struct {
	db      *sqlx.DB
	dialect Dialect
	reg     *Registry
	sealer  *Sealer
	// chatMUC is the chat room service (SetChatMUCDomain).
	chatMUC string
	// baseURL is the public base URL (SetBaseURL).
	baseURL string
	hooks   commitHooks
	// audio converts create-time audio uploads (SetAudioSink).
	audio AudioSink
	// providerHosts are the hosts channels may name in provider URLs
	// (SetProviderHosts).
	providerHosts egress.Hosts
}

// Open connects to the database named by a Switchboard URL
// (mysql://user:pass@host:3306/db or sqlite:path/to/file.db).
func Open(ctx context.Context, rawURL string, reg *Registry, sealer *Sealer) (*Store, error) {
	dialect, driver, dsn, err := ParseDatabaseURL(rawURL)
	if err != nil {
		return nil, err
	}
	if dialect.SQLite {
		path := strings.TrimPrefix(strings.SplitN(dsn, "?", 2)[0], "file:")
		if dir := filepath.Dir(path); dir != "" {
			if err := os.MkdirAll(dir, 0o750); err != nil {
				return nil, fmt.Errorf("create database directory: %w", err)
			}
		}
	}
	db, err := sqlx.Open(driver, dsn)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	if dialect.SQLite {
		// One writer at a time is all SQLite allows; a small pool avoids
		// lock churn while WAL keeps readers concurrent. Every connection
		// stays open: with database/sql's default of two idle ones, each
		// burst of four closed two, and the next opened them again, with
		// the schema read and every prepared statement prepared anew (a
		// tenth of the CPU of /fs/xml model builds, issue 28).
		db.SetMaxOpenConns(4)
		db.SetMaxIdleConns(4)
	} else {
		db.SetMaxOpenConns(50)
		db.SetMaxIdleConns(50)
		db.SetConnMaxLifetime(5 * time.Minute)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pingCtx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return &Store{db: db, dialect: dialect, reg: reg, sealer: sealer}, nil
}

// ParseDatabaseURL turns a Switchboard database URL into a driver name and DSN.
func ParseDatabaseURL(raw string) (Dialect, string, string, error) {
	switch {
	case strings.HasPrefix(raw, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(raw, "sqlite:"), "//")
		if path == "" {
			return Dialect{}, "", "", errors.New("sqlite URL needs a file path (sqlite:data/switchboard.db)")
		}
		dsn := "file:" + path + "?_pragma=foreign_keys(1)&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate"
		return sqliteDialect, "sqlite", dsn, nil
	case strings.HasPrefix(raw, "mysql://"):
		u, err := url.Parse(raw)
		if err != nil {
			return Dialect{}, "", "", fmt.Errorf("mysql URL: %w", err)
		}
		cfg := mysql.NewConfig()
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
		cfg.Net = "tcp"
		cfg.Addr = u.Host
		if u.Port() == "" {
			cfg.Addr = u.Host + ":3306"
		}
		cfg.DBName = strings.TrimPrefix(u.Path, "/")
		if cfg.DBName == "" {
			return Dialect{}, "", "", errors.New("mysql URL needs a database name (mysql://user:pass@host:3306/db)")
		}
		cfg.Collation = "utf8mb4_unicode_ci"
		cfg.MultiStatements = true
		// Arguments are escaped into the statement on the client: a query
		// is one round trip instead of three (prepare, execute, close),
		// which is most of what a short request waits on. Safe with
		// utf8mb4, the only character set used.
		cfg.InterpolateParams = true
		cfg.Params = map[string]string{"time_zone": "'+00:00'"}
		cfg.Timeout = 5 * time.Second
		return mysqlDialect, "mysql", cfg.FormatDSN(), nil
	}
	return Dialect{}, "", "", errors.New("database URL must start with mysql:// or sqlite:")
}

// Close closes the connection pool.
func (s *Store) Close() error { return s.db.Close() }

// Ping checks the database answers (for /readyz).
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Dialect reports which SQL dialect the store speaks.
func (s *Store) Dialect() Dialect { return s.dialect }

// Registry returns the resource registry the store serves.
func (s *Store) Registry() *Registry { return s.reg }

// Sealer returns the key that seals stored secrets, for that loader.
func (s *Store) Sealer() *Sealer { return s.sealer }

// inTx runs fn in a transaction, committing when it returns nil.
func (s *Store) inTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	// A deadlock or Galera certification failure rolls the whole
	// transaction back: running it again is the documented remedy.
	return withRetry(ctx, func() error { return s.inTxOnce(ctx, fn) })
}

func (s *Store) inTxOnce(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", s.dialect.translate(err))
	}
	defer tx.Rollback() //nolint:errcheck // no-op after commit
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", s.dialect.translate(err))
	}
	return nil
}

// now is the timestamp format stored in every *_at column: fixed width so
// that text order is time order on both dialects.
func now() string { return FormatTime(time.Now()) }

// FormatTime renders t the way timestamps are stored.
func FormatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

const timeLayout = "2006-01-02T15:04:05.000000Z"

var errNoRows = sql.ErrNoRows

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/platform/embeddedredis"
)

// benchKey encrypts secrets in the bench database (never a real key).
const benchKey = "6263626362636263626362636263626362636263626362636263626362636263"

// backend is the database and Redis a run uses.
type backend struct {
	name     string
	dbURL    string
	redisURL string
	st       *models.Store
	rdb      redis.UniversalClient
	closeFns []func()
}

func (b *backend) close() {
	for i := len(b.closeFns) - 1; i >= 0; i-- {
		b.closeFns[i]()
	}
}

// size is the database's size on disk: the SQLite file with its WAL, or
// MySQL's data and index length of the schema.
func (b *backend) size(ctx context.Context) string {
	if path, ok := strings.CutPrefix(b.dbURL, "sqlite:"); ok {
		var n int64
		for _, f := range []string{path, path + "-wal"} {
			if fi, err := os.Stat(f); err == nil {
				n += fi.Size()
			}
		}
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	var n int64
	if err := b.st.Querier().GetContext(ctx, &n, "SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.tables WHERE table_schema = DATABASE()"); err != nil {
		return "unknown"
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// openBackend picks MySQL + Redis from the environment, else SQLite +
// the embedded Redis in a temporary directory.
func openBackend(ctx context.Context) (*backend, error) {
	b := &backend{}
	dbURL := firstEnv("SWITCHBOARD_BENCH_MYSQL_URL", "SWITCHBOARD_TEST_MYSQL_URL")
	redisURL := firstEnv("SWITCHBOARD_BENCH_REDIS_URL", "SWITCHBOARD_TEST_REDIS_URL")
	if dbURL != "" && redisURL != "" {
		b.name = "MySQL + Redis"
	} else {
		dir, err := os.MkdirTemp("", "sbbench")
		if err != nil {
			return nil, err
		}
		b.closeFns = append(b.closeFns, func() { os.RemoveAll(dir) })
		dbURL = "sqlite:" + filepath.Join(dir, "bench.db")
		m, err := embeddedredis.Start()
		if err != nil {
			return nil, err
		}
		b.closeFns = append(b.closeFns, m.Close)
		redisURL = m.URL()
		b.name = "SQLite + embedded Redis (in-process)"
	}
	b.dbURL, b.redisURL = dbURL, redisURL
	reg, err := models.NewRegistry(models.Resources)
	if err != nil {
		return nil, err
	}
	key, err := hexKey(benchKey)
	if err != nil {
		return nil, err
	}
	sealer, err := models.NewSealer(key)
	if err != nil {
		return nil, err
	}
	b.st, err = models.Open(ctx, dbURL, reg, sealer)
	if err != nil {
		return nil, err
	}
	b.closeFns = append(b.closeFns, func() { b.st.Close() })
	if err := b.st.Migrate(ctx); err != nil {
		return nil, fmt.Errorf("migrate: %w", err)
	}
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		return nil, err
	}
	opts.PoolSize = 64
	b.rdb = redis.NewClient(opts)
	b.closeFns = append(b.closeFns, func() { b.rdb.Close() })
	if err := b.rdb.Ping(ctx).Err(); err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	return b, nil
}

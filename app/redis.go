package app

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

func randRead(b []byte) (int, error) { return rand.Read(b) }

// openRedis connects to SWITCHBOARD_REDIS_URL, or starts an in-process
// Redis-compatible server when it is unset so a first run needs nothing.
// The returned stop func closes what was opened.
func openRedis(ctx context.Context, cfg Config, log *slog.Logger) (redis.UniversalClient, func(), error) {
	url := cfg.RedisURL
	var mini *miniredis.Miniredis
	if url == "" {
		mini = miniredis.NewMiniRedis()
		if err := mini.Start(); err != nil {
			return nil, nil, fmt.Errorf("start embedded redis: %w", err)
		}
		url = "redis://" + mini.Addr() + "/0"
		log.Info("SWITCHBOARD_REDIS_URL is unset: started an in-process Redis-compatible server; live state is lost on restart", "addr", mini.Addr())
	}
	rdb, err := redisClientFor(url)
	if err != nil {
		return nil, nil, fmt.Errorf("SWITCHBOARD_REDIS_URL: %w", err)
	}
	pingCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := rdb.Ping(pingCtx).Err(); err != nil {
		// Redis may come later; the API still starts and /readyz reports it.
		log.Warn("redis not reachable at start", "error", err)
	}
	stop := func() {
		rdb.Close()
		if mini != nil {
			mini.Close()
		}
	}
	return rdb, stop, nil
}

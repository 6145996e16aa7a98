package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/platform/embeddedredis"
	"github.com/switchboard/switchboard/internal/platform/redisurl"
)

// openRedis connects to SWITCHBOARD_REDIS_URL, or starts an in-process
// Redis-compatible server when it is unset so a first run needs nothing.
// The returned stop func closes what was opened.
func openRedis(ctx context.Context, cfg Config, log *slog.Logger) (redis.UniversalClient, func(), error) {
	url := cfg.RedisURL
	var embedded *embeddedredis.Server
	if url == "" {
		var err error
		if embedded, err = embeddedredis.Start(); err != nil {
			return nil, nil, err
		}
		url = embedded.URL()
		log.Info("SWITCHBOARD_REDIS_URL is unset: started an in-process Redis-compatible server; live state is lost on restart", "addr", embedded.Addr())
	}
	rdb, err := redisurl.Open(url)
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
		if embedded != nil {
			embedded.Close()
		}
	}
	return rdb, stop, nil
}

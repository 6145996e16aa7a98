package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/redisurl"
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
		// Listening on loopback is not enough: any local process could
		// plant /fs/xml documents. A random password keeps it ours.
		pw := make([]byte, 24)
		if _, err := randRead(pw); err != nil {
			return nil, nil, err
		}
		password := hex.EncodeToString(pw)
		mini.RequireAuth(password)
		if err := mini.Start(); err != nil {
			return nil, nil, fmt.Errorf("start embedded redis: %w", err)
		}
		url = "redis://:" + password + "@" + mini.Addr() + "/0"
		go expireOnTime(ctx, mini)
		log.Info("SWITCHBOARD_REDIS_URL is unset: started an in-process Redis-compatible server; live state is lost on restart", "addr", mini.Addr())
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
		if mini != nil {
			mini.Close()
		}
	}
	return rdb, stop, nil
}

// expireOnTime lets the embedded server's key TTLs pass in real time:
// miniredis only expires keys when told how much time went by, and
// idempotency markers, rate-limit counters and caches rely on expiry.
func expireOnTime(ctx context.Context, mini *miniredis.Miniredis) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			mini.FastForward(now.Sub(last))
			last = now
		}
	}
}

// Package embeddedredis is the one seam through which Switchboard runs
// without a Redis server: an in-process, Redis-compatible server
// (miniredis) on loopback, behind a random password, whose keys expire in
// real time. It serves single-node and development installs; what it holds
// lasts as long as the process. Production installs set
// SWITCHBOARD_REDIS_URL and never start it.
package embeddedredis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// Server is a running embedded server.
type Server struct {
	mini   *miniredis.Miniredis
	url    string
	cancel context.CancelFunc
	done   chan struct{}
}

// Start listens on a free loopback port. Listening on loopback is not
// enough protection (any local process could plant /fs/xml documents), so
// the server requires a random password, which URL carries.
func Start() (*Server, error) {
	pw := make([]byte, 24)
	if _, err := rand.Read(pw); err != nil {
		return nil, fmt.Errorf("embedded redis password: %w", err)
	}
	password := hex.EncodeToString(pw)
	mini := miniredis.NewMiniRedis()
	mini.RequireAuth(password)
	if err := mini.Start(); err != nil {
		return nil, fmt.Errorf("start embedded redis: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{mini: mini, url: "redis://:" + password + "@" + mini.Addr() + "/0", cancel: cancel, done: make(chan struct{})}
	go s.expireOnTime(ctx)
	return s, nil
}

// URL is the redis:// URL of the server, password included.
func (s *Server) URL() string { return s.url }

// Addr is the server's loopback address.
func (s *Server) Addr() string { return s.mini.Addr() }

// Close stops the server; its keys are gone.
func (s *Server) Close() {
	s.cancel()
	<-s.done
	s.mini.Close()
}

// expireOnTime lets key TTLs pass in real time: miniredis only expires
// keys when told how much time went by, and idempotency markers,
// rate-limit counters and caches rely on expiry.
func (s *Server) expireOnTime(ctx context.Context) {
	defer close(s.done)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			s.mini.FastForward(now.Sub(last))
			last = now
		}
	}
}

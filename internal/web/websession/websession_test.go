package websession_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/platform/redistest"
	"github.com/switchboard/switchboard/internal/web/websession"
)

// clock is a settable time for expiry tests.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func newStore(t *testing.T, idle, absolute time.Duration) (*websession.Store, *clock, redis.UniversalClient) {
	t.Helper()
	// Real Redis when the run has one, the embedded server otherwise.
	url := os.Getenv("SWITCHBOARD_TEST_REDIS_URL")
	if url == "" {
		url = "redis://" + miniredis.RunT(t).Addr() + "/0"
	}
	rdb := apptest.OpenRedis(t, url)
	s := websession.New(rdb, "", idle, absolute)
	c := &clock{now: time.Now()}
	s.Now = c.Now
	return s, c, rdb
}

// Idle and absolute expiry follow the stored times, whatever Redis's TTL.
func TestExpiry(t *testing.T) {
	ctx := context.Background()
	s, c, _ := newStore(t, 10*time.Minute, time.Hour)
	id, sess, err := s.Create(ctx, 7, "fp")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, id)
	if err != nil || got.AdminID != 7 || got.CSRF != sess.CSRF || got.Password != "fp" {
		t.Fatalf("get: %+v %v", got, err)
	}
	// Used every 9 minutes it lives on, until the hour is up.
	for i := 0; i < 6; i++ {
		c.now = c.now.Add(9 * time.Minute)
		if _, err := s.Get(ctx, id); err != nil {
			t.Fatalf("after %d uses: %v", i+1, err)
		}
	}
	c.now = c.now.Add(7 * time.Minute) // 61 minutes after sign-in
	if _, err := s.Get(ctx, id); err != websession.ErrNoSession {
		t.Fatalf("past the absolute end: %v", err)
	}

	id, _, err = s.Create(ctx, 7, "fp")
	if err != nil {
		t.Fatal(err)
	}
	c.now = c.now.Add(10 * time.Minute)
	if _, err := s.Get(ctx, id); err != websession.ErrNoSession {
		t.Fatalf("idle: %v", err)
	}
	if _, err := s.Get(ctx, "not-a-session"); err != websession.ErrNoSession {
		t.Fatalf("unknown id: %v", err)
	}
}

// A session of one installation is no session at another sharing the
// Redis, though both have an administrator 7.
func TestSessionsKeepToTheirInstallation(t *testing.T) {
	ctx := context.Background()
	s, _, rdb := newStore(t, time.Minute, time.Hour)
	other := websession.New(rdb, "sb:another-installation:", time.Minute, time.Hour)
	id, _, err := s.Create(ctx, 7, "fp")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Get(ctx, id); err != websession.ErrNoSession {
		t.Fatalf("the other installation read the session: %v", err)
	}
	if n, err := other.Count(ctx, 7); err != nil || n != 0 {
		t.Fatalf("the other installation counts %d sessions of its administrator 7 (%v)", n, err)
	}
	if _, err := other.RevokeAdmin(ctx, 7, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, id); err != nil {
		t.Fatalf("revoked by the other installation: %v", err)
	}
}

// Redis holds a hash of the id, never the cookie value.
func TestIDNotStored(t *testing.T) {
	ctx := context.Background()
	s, _, rdb := newStore(t, time.Minute, time.Hour)
	id, _, err := s.Create(ctx, 8, "fp")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := redistest.Keys(ctx, rdb, "sb:{websession}:*")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if strings.Contains(k, id) {
			t.Fatal("session id stored in clear")
		}
	}
	if err := s.Delete(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, id); err != websession.ErrNoSession {
		t.Fatalf("after delete: %v", err)
	}
}

// RevokeAdmin ends one administrator's sessions, keeping those keep
// accepts, and leaves other administrators' alone.
func TestRevokeAdmin(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newStore(t, time.Minute, time.Hour)
	// Ids no other test's administrator has in a shared Redis.
	a, b := time.Now().UnixNano(), time.Now().UnixNano()+1
	old, _, _ := s.Create(ctx, a, "old")
	cur, _, _ := s.Create(ctx, a, "new")
	other, _, _ := s.Create(ctx, b, "old")
	n, err := s.RevokeAdmin(ctx, a, func(x *websession.Session) bool { return x.Password == "new" })
	if err != nil || n != 1 {
		t.Fatalf("revoked %d: %v", n, err)
	}
	if _, err := s.Get(ctx, old); err != websession.ErrNoSession {
		t.Fatal("stale session kept")
	}
	for _, id := range []string{cur, other} {
		if _, err := s.Get(ctx, id); err != nil {
			t.Fatalf("kept session: %v", err)
		}
	}
	if n, _ := s.RevokeAdmin(ctx, a, nil); n != 1 {
		t.Fatalf("revoked %d", n)
	}
	if c, _ := s.Count(ctx, a); c != 0 {
		t.Fatalf("%d left", c)
	}
}

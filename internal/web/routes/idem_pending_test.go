package routes

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"
)

// Seen item 8: an Idempotency-Key stayed "pending" for 24 h when a replica
// died mid-request, so every retry got 409 for a day though the call was
// placed. The marker now lives seconds and is renewed while the request runs.
func TestIdempotencyPendingExpiresWhenTheReplicaDies(t *testing.T) {
	t.Parallel()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	m := &idempotency{rdb: rdb, ttl: 24 * time.Hour, pendingTTL: 3 * time.Second, renewEvery: 50 * time.Millisecond}
	release := make(chan struct{})
	var runs atomic.Int32
	app := fiber.New(fiber.Config{ErrorHandler: errorHandler})
	app.Post("/act", func(c *fiber.Ctx) error {
		c.Locals(principalKey, &Principal{Kind: "tenant_key", KeyScope: "k1"})
		return c.Next()
	}, m.wrap(func(c *fiber.Ctx) error {
		if runs.Add(1) == 1 {
			<-release // the first request hangs, as on a replica about to die
		}
		return c.Status(202).JSON(fiber.Map{"run": runs.Load()})
	}))
	send := func() int {
		req := httptest.NewRequest("POST", "/act", strings.NewReader(`{"to":"1002"}`))
		req.Header.Set("Idempotency-Key", "retry-me")
		resp, err := app.Test(req, -1)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode
	}
	first := make(chan int, 1)
	go func() { first <- send() }()
	var rkey string
	deadline := time.Now().Add(5 * time.Second)
	for rkey == "" && time.Now().Before(deadline) {
		if keys := mr.Keys(); len(keys) == 1 {
			rkey = keys[0]
		}
		time.Sleep(5 * time.Millisecond)
	}
	if rkey == "" {
		t.Fatal("no pending marker in Redis")
	}
	if ttl := mr.TTL(rkey); ttl <= 0 || ttl > 3*time.Second {
		t.Fatalf("pending marker lives %v, want at most the pending TTL", ttl)
	}
	// While the request runs the marker is renewed: time passing beyond the
	// pending TTL in small steps does not free the key.
	for i := 0; i < 5; i++ {
		mr.FastForward(time.Second)
		time.Sleep(150 * time.Millisecond)
	}
	if !mr.Exists(rkey) {
		t.Fatal("the marker of a running request expired")
	}
	if got := send(); got != http.StatusConflict {
		t.Fatalf("retry while the first runs: %d, want 409", got)
	}
	close(release)
	if got := <-first; got != 202 {
		t.Fatalf("first request: %d", got)
	}
	if ttl := mr.TTL(rkey); ttl < time.Hour {
		t.Fatalf("the answer is kept %v, want 24 h", ttl)
	}

	// A replica that dies leaves its marker without renewals: a retry is
	// answered once the pending TTL has passed, not after a day.
	_ = rdb.Set(t.Context(), rkey, `{"state":"pending","hash":"`+mustEntryHash(t, mr, rkey)+`"}`, 3*time.Second).Err()
	if got := send(); got != http.StatusConflict {
		t.Fatalf("retry right after the death: %d, want 409", got)
	}
	mr.FastForward(4 * time.Second)
	if got := send(); got != 202 {
		t.Fatalf("retry after the pending TTL: %d, want the action to run (202)", got)
	}
	if runs.Load() != 2 {
		t.Fatalf("action ran %d times", runs.Load())
	}
}

// mustEntryHash reads the request hash of a stored entry.
func mustEntryHash(t *testing.T, mr *miniredis.Miniredis, key string) string {
	t.Helper()
	v, err := mr.Get(key)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(v, `"hash":"`)
	return v[i+8 : i+8+64]
}

package routes

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"
)

// idempotency replays the first answer of an action retried with the same
// Idempotency-Key, so a retried POST never places a second call. Keys are
// scoped per API key and live ttl. While the first request runs the Redis
// entry holds a "pending" marker; a concurrent duplicate waits briefly for
// the answer, then gets 409 in_progress. The marker lives only pendingTTL
// and is renewed while the request runs, so a replica that dies mid-request
// blocks retries for seconds, not a day.
type idempotency struct {
	rdb redis.UniversalClient
	// prefix starts every key (the installation's).
	prefix string
	ttl    time.Duration
	// pendingTTL and renewEvery default to idemPendingTTL and a third of it.
	pendingTTL, renewEvery time.Duration
}

// idemEntry is what Redis holds for one key.
type idemEntry struct {
	State  string `json:"state"` // pending or done
	Hash   string `json:"hash"`  // of method, path and body
	Status int    `json:"status,omitempty"`
	Body   []byte `json:"body,omitempty"`
}

const (
	idemWait     = 3 * time.Second
	idemPoll     = 25 * time.Millisecond
	idemMaxKey   = 255
	idemReplayed = "Idempotent-Replayed"
	// idemPendingTTL is how long a dead replica's marker blocks retries.
	idemPendingTTL = 15 * time.Second
)

// holdPending keeps the pending marker alive until stop is called.
func (m *idempotency) holdPending(ctx context.Context, rkey string, ttl, every time.Duration) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				m.rdb.PExpire(ctx, rkey, ttl)
			}
		}
	}()
	return func() { close(done); <-finished }
}

// wrap runs h at most once per Idempotency-Key. Answers of 5xx are not
// kept: the action did not happen (or it is unknown), and a retry should
// try again.
func (m *idempotency) wrap(h fiber.Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		key := c.Get("Idempotency-Key")
		if key == "" {
			return h(c)
		}
		if len(key) > idemMaxKey {
			return newError(fiber.StatusBadRequest, "bad_request", "Idempotency-Key is longer than 255 characters")
		}
		p := principal(c)
		sum := sha256.Sum256([]byte(c.Method() + " " + c.Path() + "\n" + string(c.Body())))
		hash := hex.EncodeToString(sum[:])
		kh := sha256.Sum256([]byte(key))
		rkey := m.prefix + "idem:" + p.KeyScope + ":" + hex.EncodeToString(kh[:16])
		ctx := c.UserContext()

		pendingTTL, every := m.pendingTTL, m.renewEvery
		if pendingTTL <= 0 {
			pendingTTL = idemPendingTTL
		}
		if every <= 0 {
			every = pendingTTL / 3
		}
		pending, _ := json.Marshal(idemEntry{State: "pending", Hash: hash})
		won, err := m.rdb.SetNX(ctx, rkey, pending, pendingTTL).Result()
		if err != nil {
			return errIdemStore(c, err)
		}
		if !won {
			return m.replay(c, ctx, rkey, hash)
		}
		stop := m.holdPending(context.WithoutCancel(ctx), rkey, pendingTTL, every)
		err = h(c)
		stop()
		if err != nil {
			if herr := c.App().ErrorHandler(c, err); herr != nil {
				m.rdb.Del(context.WithoutCancel(ctx), rkey)
				return herr
			}
		}
		status := c.Response().StatusCode()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if status >= 500 {
			m.rdb.Del(sctx, rkey)
			return nil
		}
		done, _ := json.Marshal(idemEntry{State: "done", Hash: hash, Status: status, Body: c.Response().Body()})
		if err := m.rdb.Set(sctx, rkey, done, m.ttl).Err(); err != nil {
			logger(c).Warn("idempotency answer not stored", "error", err)
		}
		return nil
	}
}

// replay answers a duplicate: the stored answer, 422 for a different body,
// or 409 while the first request still runs.
func (m *idempotency) replay(c *fiber.Ctx, ctx context.Context, rkey, hash string) error {
	deadline := time.Now().Add(idemWait)
	for {
		raw, err := m.rdb.Get(ctx, rkey).Bytes()
		if errors.Is(err, redis.Nil) {
			return newError(fiber.StatusConflict, "in_progress", "a request with this Idempotency-Key failed just now; retry")
		}
		if err != nil {
			return errIdemStore(c, err)
		}
		var e idemEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			return errIdemStore(c, err)
		}
		if e.Hash != hash {
			return newError(fiber.StatusUnprocessableEntity, "idempotency_key_reused", "this Idempotency-Key was used with a different request body")
		}
		if e.State == "done" {
			c.Set(idemReplayed, "true")
			c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
			return c.Status(e.Status).Send(e.Body)
		}
		if time.Now().After(deadline) {
			return newError(fiber.StatusConflict, "in_progress", "a request with this Idempotency-Key is still being processed")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(idemPoll):
		}
	}
}

// errIdemStore refuses the action when Redis cannot tell whether it already
// ran: acting anyway could place a second call.
func errIdemStore(c *fiber.Ctx, err error) error {
	logger(c).Warn("idempotency store", "error", err)
	return newError(fiber.StatusServiceUnavailable, "idempotency_unavailable", "the idempotency store is unavailable; retry later")
}

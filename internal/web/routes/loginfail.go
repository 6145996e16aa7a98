package routes

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/models"
)

// LoginFailedEvent is the system event of a failed administrator sign-in
// (HTTP Basic or the web login form).
const LoginFailedEvent = "administrator.login_failed"

// loginFailureWindow is the window of login_failed events: at most one
// per administrator in each minute of the clock, each counting the
// failures since the previous one, so a password-guessing storm is one
// event a minute.
const loginFailureWindow = time.Minute

// loginAttempt says where a sign-in came from.
type loginAttempt struct {
	Addr string // the client address (c.IP(), proxy-aware when configured)
	Via  string // "basic" or "web_login"
}

// loginFailures turns failed administrator sign-ins into system events,
// at most one per administrator per window across every replica (Redis:
// the clock's minute, a window key set with NX, a counter of the failures it held back).
// Names that are no administrator share one window, so guessing at many
// names does not multiply the events either. Without Redis the windows
// are this process's.
type loginFailures struct {
	store *models.Store
	rdb   redis.UniversalClient
	// prefix starts the Redis keys (the installation's).
	prefix string
	log    *slog.Logger

	mu    sync.Mutex
	local map[string]*localWindow
}

type localWindow struct {
	until time.Time
	held  int64
}

// loginFailPrefix follows the installation's key prefix.
const loginFailPrefix = "loginfail:"

// record notes one failed sign-in as username (known: an administrator of
// that name exists) and emits the event when its window is open. Failing
// to emit is logged: the refusal itself stands either way.
func (f *loginFailures) record(ctx context.Context, from loginAttempt, username string, known bool, reason string) {
	bucket := "?"
	if known {
		bucket = "admin:" + username
	}
	failures, open := f.open(ctx, bucket)
	if !open {
		return
	}
	if len(username) > 128 {
		username = username[:128]
	}
	ev, err := models.NewEvent(LoginFailedEvent, "", username, map[string]any{
		"username": username, "known_administrator": known, "remote_addr": from.Addr, "via": from.Via,
		"reason": reason, "failures": failures, "window_seconds": int(loginFailureWindow / time.Second),
	})
	if err == nil {
		err = f.store.Emit(ctx, ev)
	}
	if err != nil {
		f.log.Error("recording a failed administrator login failed", "error", err)
	}
}

// open counts a failure in bucket. When no window is open it opens one and
// returns the failures to report: this one plus those held back since the
// last event.
func (f *loginFailures) open(ctx context.Context, bucket string) (int64, bool) {
	if f.rdb != nil {
		// The window is the clock's minute, in the key's name: a Redis that
		// does not expire keys on time (the embedded one) still moves on.
		minute := time.Now().Unix() / int64(loginFailureWindow/time.Second)
		opened, err := f.rdb.SetNX(ctx, fmt.Sprintf("%s%swin:%s:%d", f.prefix, loginFailPrefix, bucket, minute), 1, 2*loginFailureWindow).Result()
		if err == nil {
			held := f.prefix + loginFailPrefix + "held:" + bucket
			if !opened {
				f.rdb.Incr(ctx, held)
				f.rdb.Expire(ctx, held, 24*time.Hour)
				return 0, false
			}
			n, _ := f.rdb.GetDel(ctx, held).Int64()
			return n + 1, true
		}
		f.log.Warn("login failure window unavailable in redis; counting locally", "error", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.local == nil {
		f.local = map[string]*localWindow{}
	}
	w := f.local[bucket]
	now := time.Now()
	if w != nil && now.Before(w.until) {
		w.held++
		return 0, false
	}
	var held int64
	if w != nil {
		held = w.held
	}
	f.local[bucket] = &localWindow{until: now.Truncate(loginFailureWindow).Add(loginFailureWindow)}
	return held + 1, true
}

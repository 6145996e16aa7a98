package routes

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/platform/keyprefix"
)

// Limits are the request limits every replica enforces together through
// Redis. Zero disables a limit.
type Limits struct {
	// RequestsPerSecond and Burst limit each credential (API key or
	// administrator) across all replicas.
	RequestsPerSecond, Burst int
	// AuthFailuresPerMinute limits failed authentications per client
	// address; beyond it the address gets 429 before any password check.
	AuthFailuresPerMinute int
	// AccountFailures limits failed sign-ins per administrator in
	// accountFailureWindow, whatever the address: beyond it the account
	// takes sign-ins only from addresses it signed in from before
	// (accountKnownFor), so guessing from many addresses is throttled but
	// cannot lock the administrator out.
	AccountFailures int
}

// accountFailureWindow is the period of Limits.AccountFailures.
const accountFailureWindow = 15 * time.Minute

// accountKnownFor is how long a successful sign-in makes its address known
// to the account.
const accountKnownFor = 30 * 24 * time.Hour

// limiter applies Limits with GCRA counters in Redis (redis_rate). When
// Redis is unreachable it lets requests through: an outage of the limiter
// must not take the API down.
type limiter struct {
	rdb    redis.UniversalClient
	rl     *redis_rate.Limiter
	limits Limits
	// prefix starts every key: the installation's, so installations
	// sharing a Redis never count each other's key ids or addresses.
	prefix string
}

func newLimiter(rdb redis.UniversalClient, keyPrefix string, l Limits) *limiter {
	if rdb == nil {
		return &limiter{}
	}
	return &limiter{rdb: rdb, rl: redis_rate.NewLimiter(rdb), limits: l, prefix: keyprefix.OrDefault(keyPrefix)}
}

// blocks reports whether addresses are ever blocked (authBlocked asks Redis).
func (l *limiter) blocks() bool { return l.rl != nil && l.limits.AuthFailuresPerMinute > 0 }

// authBlocked reports whether the address is refused for failing too
// often, and for how long. It runs before any key lookup or bcrypt check.
func (l *limiter) authBlocked(ctx context.Context, addr string) (time.Duration, bool) {
	if !l.blocks() {
		return 0, false
	}
	// The value is the end of the block (Unix ms), so a Redis that does
	// not expire keys on time (the embedded one under test) cannot block
	// an address for longer.
	until, err := l.rdb.Get(ctx, l.prefix+"authblock:"+addr).Int64()
	if err != nil {
		return 0, false
	}
	left := time.Until(time.UnixMilli(until))
	return left, left > 0
}

// authFailed counts a failed authentication from addr; once the address
// is over its limit it is blocked for the time GCRA gives back.
func (l *limiter) authFailed(ctx context.Context, addr string) (time.Duration, bool) {
	if l.rl == nil || l.limits.AuthFailuresPerMinute <= 0 {
		return 0, false
	}
	n := l.limits.AuthFailuresPerMinute
	res, err := l.rl.Allow(ctx, l.prefix+"authfail:"+addr, redis_rate.Limit{Rate: n, Burst: n, Period: time.Minute})
	if err != nil || res.Allowed > 0 {
		return 0, false
	}
	retry := max(res.RetryAfter, time.Second)
	l.rdb.Set(ctx, l.prefix+"authblock:"+addr, time.Now().Add(retry).UnixMilli(), retry)
	return retry, true
}

// request counts one request of a credential.
func (l *limiter) request(ctx context.Context, credential string) (time.Duration, bool) {
	if l.rl == nil || l.limits.RequestsPerSecond <= 0 {
		return 0, true
	}
	burst := max(l.limits.Burst, l.limits.RequestsPerSecond)
	res, err := l.rl.Allow(ctx, l.prefix+"req:"+credential, redis_rate.Limit{Rate: l.limits.RequestsPerSecond, Burst: burst, Period: time.Second})
	if err != nil || res.Allowed > 0 {
		return 0, true
	}
	return max(res.RetryAfter, time.Second), false
}

// tooMany is the 429 answer with Retry-After in whole seconds.
func tooMany(c *fiber.Ctx, retry time.Duration, what string) error {
	c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int(math.Ceil(retry.Seconds()))))
	return newError(fiber.StatusTooManyRequests, "rate_limited", fmt.Sprintf("too many %s; retry after %s", what, retry.Round(time.Second)))
}

// perHour counts one use of key against n an hour (a click-to-call
// widget's calls per visitor address), shared by every replica.
func (l *limiter) perHour(ctx context.Context, key string, n int) (time.Duration, bool) {
	if l.rl == nil || n <= 0 {
		return 0, true
	}
	res, err := l.rl.Allow(ctx, l.prefix+key, redis_rate.Limit{Rate: n, Burst: n, Period: time.Hour})
	if err != nil || res.Allowed > 0 {
		return 0, true
	}
	return max(res.RetryAfter, time.Second), false
}

// accountKey names an administrator's account limit keys (the name as
// given, bounded).
func (l *limiter) accountKey(kind, user string) string {
	if len(user) > 128 {
		user = user[:128]
	}
	return l.prefix + kind + ":" + user
}

// accountBlocked reports whether sign-ins to user from addr are refused
// (the account failed too often and addr never signed in to it), and for
// how long. It runs before the password check.
func (l *limiter) accountBlocked(ctx context.Context, user, addr string) (time.Duration, bool) {
	if l.rl == nil || l.limits.AccountFailures <= 0 {
		return 0, false
	}
	until, err := l.rdb.Get(ctx, l.accountKey("acctblock", user)).Int64()
	if err != nil {
		return 0, false
	}
	left := time.Until(time.UnixMilli(until))
	if left <= 0 {
		return 0, false
	}
	if n, err := l.rdb.Exists(ctx, l.accountKey("acctknown", user)+"|"+addr).Result(); err == nil && n > 0 {
		return 0, false
	}
	return left, true
}

// accountFailed counts a failed sign-in to user; once the account is over
// its limit, unknown addresses are refused for the time GCRA gives back.
func (l *limiter) accountFailed(ctx context.Context, user string) {
	if l.rl == nil || l.limits.AccountFailures <= 0 {
		return
	}
	n := l.limits.AccountFailures
	res, err := l.rl.Allow(ctx, l.accountKey("acctfail", user), redis_rate.Limit{Rate: n, Burst: n, Period: accountFailureWindow})
	if err != nil || res.Allowed > 0 {
		return
	}
	retry := max(res.RetryAfter, time.Second)
	l.rdb.Set(ctx, l.accountKey("acctblock", user), time.Now().Add(retry).UnixMilli(), retry)
}

// accountSucceeded remembers addr as one user signs in from.
func (l *limiter) accountSucceeded(ctx context.Context, user, addr string) {
	if l.rl == nil || l.limits.AccountFailures <= 0 {
		return
	}
	l.rdb.Set(ctx, l.accountKey("acctknown", user)+"|"+addr, 1, accountKnownFor)
}

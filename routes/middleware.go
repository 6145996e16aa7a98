package routes

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"
)

type ctxKey int

const (
	loggerKey ctxKey = iota
	requestIDKey
)

// Locals keys.
const (
	principalKey      = "principal"
	basicChallengeKey = "basic_challenge"
)

// requestContext is the first middleware: it gives the request an id
// (echoing a sane X-Request-ID), a deadline and a logger carrying the id,
// all in c.UserContext(), which Fiber otherwise leaves as Background.
func requestContext(base *slog.Logger, timeout time.Duration) fiber.Handler {
	return func(c *fiber.Ctx) error {
		id := c.Get(fiber.HeaderXRequestID)
		if !validRequestID(id) {
			id = newRequestID()
		}
		c.Set(fiber.HeaderXRequestID, id)
		log := base.With("request_id", id)
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		ctx = context.WithValue(ctx, loggerKey, log)
		ctx = context.WithValue(ctx, requestIDKey, id)
		c.SetUserContext(ctx)
		start := time.Now()
		err := c.Next()
		if err != nil {
			if herr := c.App().ErrorHandler(c, err); herr != nil {
				return herr
			}
		}
		log.LogAttrs(ctx, levelFor(c.Response().StatusCode()), "http request",
			slog.String("method", c.Method()),
			slog.String("path", redactPath(c.Path())),
			slog.Int("status", c.Response().StatusCode()),
			slog.Duration("duration", time.Since(start)),
			slog.String("remote", c.IP()),
		)
		return nil
	}
}

// levelFor keeps access logs at debug (FreeSWITCH and probes poll all the
// time) and raises server errors, so a production log shows what matters.
func levelFor(status int) slog.Level {
	if status >= 500 {
		return slog.LevelError
	}
	return slog.LevelDebug
}

// redactPath keeps webhook tokens out of logs.
func redactPath(p string) string {
	const hook = "/integration/webhooks/"
	if len(p) > len(hook)+6 && p[:len(hook)] == hook {
		return p[:len(hook)+6] + "…"
	}
	return p
}

func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

func newRequestID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// logger returns the request's logger.
func logger(c *fiber.Ctx) *slog.Logger {
	if l, ok := c.UserContext().Value(loggerKey).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

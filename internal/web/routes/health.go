package routes

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"
)

func (s *server) healthz(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"status": "ok"})
}

// readyz answers 200 only when the database, Redis and any extra
// dependency answer; load balancers take a replica out otherwise.
func (s *server) readyz(c *fiber.Ctx) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
	defer cancel()
	checks := map[string]string{}
	ok := true
	record := func(name string, err error) {
		var info *Informational
		if errors.As(err, &info) {
			checks[name] = info.State
			return
		}
		if err != nil {
			checks[name] = err.Error()
			ok = false
			return
		}
		checks[name] = "ok"
	}
	record("database", s.Store.Ping(ctx))
	record("redis", s.Redis.Ping(ctx).Err())
	for name, check := range s.Ready {
		record(name, check(ctx))
	}
	body := fiber.Map{"checks": checks}
	if s.OutboxDepth != nil {
		// A growing depth means a subscriber keeps failing (or no replica
		// dispatches); it does not take this replica out of service.
		n, err := s.OutboxDepth(ctx)
		record("outbox", err)
		body["outbox_depth"] = n
	}
	status := fiber.StatusOK
	body["status"] = "ready"
	if !ok {
		status, body["status"] = fiber.StatusServiceUnavailable, "not ready"
	}
	return c.Status(status).JSON(body)
}

// Informational is what a Ready check returns for a dependency whose
// absence does not take the replica out (an optional or degraded part):
// /readyz shows State under the check's name and stays ready.
type Informational struct{ State string }

func (i *Informational) Error() string { return i.State }

func itoa(v any) string { return fmt.Sprint(v) }

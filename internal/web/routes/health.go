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

// Readiness is split by what a replica can still do, so that an outage of
// one dependency does not take every replica out of a load balancer:
//
//   - /readyz/api: the configuration API works: the database answers.
//     Redis is reported but does not count (writes and reads work without
//     it; live-call state and change notifications wait for it).
//   - /readyz/xml: the FreeSWITCH XML path answers: the database answers,
//     or the replica holds models to answer from (fetches it cannot prove
//     current answer "not found" meanwhile).
//   - /readyz: both (what a single health check should use).
//
// Every readiness answers 503 "draining" once shutdown has begun.
func (s *server) readyz(c *fiber.Ctx) error    { return s.readiness(c, true, true) }
func (s *server) readyzAPI(c *fiber.Ctx) error { return s.readiness(c, true, false) }
func (s *server) readyzXML(c *fiber.Ctx) error { return s.readiness(c, false, true) }

func (s *server) readiness(c *fiber.Ctx, api, xml bool) error {
	ctx, cancel := context.WithTimeout(c.UserContext(), 2*time.Second)
	defer cancel()
	checks := map[string]string{}
	state := func(err error) string {
		var info *Informational
		switch {
		case errors.As(err, &info):
			return info.State
		case err != nil:
			// Never the driver's text: what an operator needs is which
			// part, and the logs say why.
			return "unavailable"
		}
		return "ok"
	}
	dbErr := s.Store.Ping(ctx)
	checks["database"] = state(dbErr)
	if err := s.Redis.Ping(ctx).Err(); err != nil {
		checks["redis"] = "unavailable: live calls and change notifications wait for it"
	} else {
		checks["redis"] = "ok"
	}
	ok := true
	if api && dbErr != nil {
		ok = false
	}
	if xml && dbErr != nil {
		servable := s.XMLServable != nil && s.XMLServable()
		checks["xml"] = "answering from memory"
		if !servable {
			checks["xml"] = "unavailable"
			ok = false
		}
	}
	for name, check := range s.Ready {
		err := check(ctx)
		checks[name] = state(err)
		var info *Informational
		if err != nil && !errors.As(err, &info) {
			ok = false
		}
	}
	body := fiber.Map{"checks": checks}
	if s.OutboxDepth != nil && dbErr == nil {
		// A growing depth means a subscriber keeps failing (or no replica
		// dispatches); it does not take this replica out of service.
		n, err := s.OutboxDepth(ctx)
		checks["outbox"] = state(err)
		body["outbox_depth"] = n
	}
	status := fiber.StatusOK
	body["status"] = "ready"
	switch {
	case s.Draining != nil && s.Draining():
		status, body["status"] = fiber.StatusServiceUnavailable, "draining"
	case !ok:
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

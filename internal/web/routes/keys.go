package routes

import (
	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/models"
)

// API keys: platform credentials manage every key; a tenant key with
// keys.manage manages its own tenant's keys and cannot grant more than it
// holds (the routes declare ScopeKeys).

// keyScope is the tenant whose keys the caller manages ("" = all).
func (s *server) keyScope(c *fiber.Ctx) (tenant string, err error) {
	if p := principal(c); !p.Platform() {
		return p.Tenant, nil
	}
	return "", nil
}

func (s *server) createKey(c *fiber.Ctx) error {
	in, err := decodeObject(c)
	if err != nil {
		return err
	}
	rec, err := s.issueKey(c, in)
	if err != nil {
		return err
	}
	c.Location("/api/key/" + itoa(rec["id"]))
	return c.Status(fiber.StatusCreated).JSON(rec)
}

// issueKey creates a key for the caller (the API and the menu).
func (s *server) issueKey(c *fiber.Ctx, in map[string]any) (models.Record, error) {
	scope, err := s.keyScope(c)
	if err != nil {
		return nil, err
	}
	p := principal(c)
	if scope != "" {
		if t, _ := in["tenant"].(string); t == "" || !p.MayTenant(t) {
			return nil, newError(fiber.StatusForbidden, "forbidden", "a tenant key may only create keys of its own tenant")
		}
		if p.perms != nil {
			perms, _ := in["permissions"].([]any)
			if len(perms) == 0 {
				return nil, newError(fiber.StatusForbidden, "forbidden", "name the permissions: a key cannot grant more than it holds")
			}
			for _, perm := range perms {
				if ps, _ := perm.(string); !p.perms[ps] {
					return nil, newError(fiber.StatusForbidden, "forbidden", "a key cannot grant a permission it does not hold")
				}
			}
		}
	}
	return s.Store.CreateKey(c.UserContext(), in, p.Name)
}

func (s *server) listKeys(c *fiber.Ctx) error {
	scope, err := s.keyScope(c)
	if err != nil {
		return err
	}
	page, err := pageParams(c)
	if err != nil {
		return err
	}
	recs, total, err := s.Store.ListKeys(c.UserContext(), scope, page)
	if err != nil {
		return err
	}
	return sendPage(c, recs, total, page)
}

func (s *server) revokeKey(c *fiber.Ctx) error {
	if err := s.withdrawKey(c, c.Params("id")); err != nil {
		return err
	}
	return c.SendStatus(fiber.StatusNoContent)
}

// withdrawKey revokes a key the caller manages (the API and the menu).
func (s *server) withdrawKey(c *fiber.Ctx, id string) error {
	scope, err := s.keyScope(c)
	if err != nil {
		return err
	}
	return s.Store.RevokeKey(c.UserContext(), id, scope)
}

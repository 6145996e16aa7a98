package routes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/models"
)

// crudRoutes generates a resource's routes from its declaration.
func (s *server) crudRoutes(res *models.Resource) []Route {
	base := resourcePath(res)
	title := res.Title
	if res.Singleton {
		return []Route{
			{Method: "GET", Path: base, Summary: "Show the " + title, Tag: res.Name, Auth: AuthAPI, Resource: res, Op: "get", Handler: s.getObject(res)},
			{Method: "PUT", Path: base, Summary: "Change the " + title, Tag: res.Name, Auth: AuthAPI, Resource: res, Op: "update", Handler: s.updateObject(res)},
		}
	}
	item := base + "/:key"
	return []Route{
		{Method: "GET", Path: base + "/", Summary: "List " + res.Name, Tag: res.Name, Auth: AuthAPI, Resource: res, Op: "list", Query: []string{"limit", "offset"}, Handler: s.listObjects(res)},
		{Method: "POST", Path: base + "/", Summary: "Create a " + title, Tag: res.Name, Auth: AuthAPI, Resource: res, Op: "create", Status: 201, Handler: s.createObject(res)},
		{Method: "GET", Path: item, Summary: "Show a " + title, Tag: res.Name, Auth: AuthAPI, Resource: res, Op: "get", Handler: s.getObject(res)},
		{Method: "PUT", Path: item, Summary: "Change any subset of a " + title + "'s fields", Tag: res.Name, Auth: AuthAPI, Resource: res, Op: "update", Handler: s.updateObject(res)},
		{Method: "DELETE", Path: item, Summary: "Delete a " + title, Tag: res.Name, Auth: AuthAPI, Resource: res, Op: "delete", Status: 204, Handler: s.deleteObject(res)},
	}
}

// owner authorises the request for the resource and returns its tenant.
func (s *server) owner(c *fiber.Ctx, res *models.Resource, perm string) (models.Owner, error) {
	if res.Scope == models.TenantScope {
		return s.requireTenant(c, perm)
	}
	if res.Name == "tenants" {
		// Tenants are listed by everyone for what they may see; reading or
		// changing one tenant needs that tenant in scope.
		p := principal(c)
		if !p.Can(perm) {
			return models.Owner{}, newError(fiber.StatusForbidden, "forbidden", "this credential lacks the permission "+perm)
		}
		if key := c.Params("key"); key != "" && !p.MayTenant(key) {
			return models.Owner{}, newError(fiber.StatusForbidden, "forbidden", "this credential may not act in tenant "+key)
		}
		if perm == "config.write" && !p.Platform() {
			// A tenant credential must not raise its own limits or delete itself.
			return models.Owner{}, newError(fiber.StatusForbidden, "forbidden", "changing tenants needs a platform credential")
		}
		return models.Owner{}, nil
	}
	return models.Owner{}, requirePlatform(c, perm)
}

// writeInput authorises a write and decodes its JSON body.
func (s *server) writeInput(c *fiber.Ctx, res *models.Resource) (models.Owner, map[string]any, error) {
	o, err := s.owner(c, res, "config.write")
	if err != nil {
		return o, nil, err
	}
	in, err := decodeObject(c)
	return o, in, err
}

func (s *server) listObjects(res *models.Resource) fiber.Handler {
	return func(c *fiber.Ctx) error {
		o, err := s.owner(c, res, "config.read")
		if err != nil {
			return err
		}
		page, err := pageParams(c)
		if err != nil {
			return err
		}
		if res.Name == "tenants" {
			page.Only = visibleTenants(principal(c))
		}
		recs, total, err := s.Store.List(c.UserContext(), res, o, page)
		if err != nil {
			return err
		}
		return sendPage(c, recs, total, page)
	}
}

// visibleTenants is nil for callers who see every tenant.
func visibleTenants(p *Principal) []string {
	switch {
	case p.Kind == "tenant_key" || p.Kind == "user_key":
		return []string{p.Tenant}
	case p.Tenants != nil:
		return p.Tenants
	}
	return nil
}

func (s *server) getObject(res *models.Resource) fiber.Handler {
	return func(c *fiber.Ctx) error {
		o, err := s.owner(c, res, "config.read")
		if err != nil {
			return err
		}
		rec, err := s.Store.Get(c.UserContext(), res, o, c.Params("key"))
		if err != nil {
			return err
		}
		return c.JSON(rec)
	}
}

func (s *server) createObject(res *models.Resource) fiber.Handler {
	return func(c *fiber.Ctx) error {
		o, in, err := s.writeInput(c, res)
		if err != nil {
			return err
		}
		if src, ok := in["tenant_to_clone"].(string); ok && src != "" && !principal(c).MayTenant(src) {
			return newError(fiber.StatusForbidden, "forbidden", "this credential may not read tenant "+src)
		}
		rec, err := s.Store.Create(c.UserContext(), res, o, in)
		if err != nil {
			return err
		}
		c.Location(strings.TrimSuffix(c.Path(), "/") + "/" + url.PathEscape(fmt.Sprint(rec[res.KeyField()])))
		return c.Status(fiber.StatusCreated).JSON(rec)
	}
}

func (s *server) updateObject(res *models.Resource) fiber.Handler {
	return func(c *fiber.Ctx) error {
		o, in, err := s.writeInput(c, res)
		if err != nil {
			return err
		}
		rec, err := s.Store.Update(c.UserContext(), res, o, c.Params("key"), in)
		if err != nil {
			return err
		}
		return c.JSON(rec)
	}
}

func (s *server) deleteObject(res *models.Resource) fiber.Handler {
	return func(c *fiber.Ctx) error {
		o, err := s.owner(c, res, "config.write")
		if err != nil {
			return err
		}
		key := c.Params("key")
		if err := s.Store.Delete(c.UserContext(), res, o, key); err != nil {
			return err
		}
		return c.SendStatus(fiber.StatusNoContent)
	}
}

// decodeObject reads a JSON object body strictly: malformed JSON, a body
// that is not an object and trailing data are refused with 400.
func decodeObject(c *fiber.Ctx) (map[string]any, error) {
	body := c.Body()
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, newError(fiber.StatusBadRequest, "invalid_json", "request body must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var in map[string]any
	if err := dec.Decode(&in); err != nil || in == nil {
		return nil, newError(fiber.StatusBadRequest, "invalid_json", "request body must be a JSON object")
	}
	if dec.More() {
		return nil, newError(fiber.StatusBadRequest, "invalid_json", "request body has data after the JSON object")
	}
	return in, nil
}

const (
	defaultLimit = 50
	maxLimit     = 1000
)

// pageParams reads limit and offset.
func pageParams(c *fiber.Ctx) (models.Page, error) {
	p := models.Page{Limit: defaultLimit}
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxLimit {
			return p, &models.ValidationError{Fields: map[string]string{"limit": fmt.Sprintf("must be an integer from 1 to %d", maxLimit)}}
		}
		p.Limit = n
	}
	if v := c.Query("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return p, &models.ValidationError{Fields: map[string]string{"offset": "must be a non-negative integer"}}
		}
		p.Offset = n
	}
	return p, nil
}

// sendPage writes a list: the JSON array, X-Total-Count and a Link header.
func sendPage(c *fiber.Ctx, items any, total int, p models.Page) error {
	c.Set("X-Total-Count", strconv.Itoa(total))
	var links []string
	q, _ := url.ParseQuery(string(c.Request().URI().QueryString()))
	link := func(offset int, rel string) {
		q.Set("limit", strconv.Itoa(p.Limit))
		q.Set("offset", strconv.Itoa(offset))
		links = append(links, fmt.Sprintf(`<%s?%s>; rel="%s"`, c.Path(), q.Encode(), rel))
	}
	if p.Offset+p.Limit < total {
		link(p.Offset+p.Limit, "next")
	}
	if p.Offset > 0 {
		prev := p.Offset - p.Limit
		if prev < 0 {
			prev = 0
		}
		link(prev, "prev")
	}
	if len(links) > 0 {
		c.Set("Link", strings.Join(links, ", "))
	}
	c.Set("Access-Control-Expose-Headers", "X-Total-Count, Link")
	return c.JSON(items)
}

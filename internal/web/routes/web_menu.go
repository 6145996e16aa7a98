package routes

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/models"
)

// menuTenantLimit caps the tenants the menu lists (the API pages the rest).
const menuTenantLimit = 500

// menuKeyLimit caps the API keys the menu lists: the newest live ones.
const menuKeyLimit = 200

type menuView struct {
	page
	Tenants       []menuTenant
	TenantTotal   int
	MayManageKeys bool
	// Platform offers the platform resources' pages.
	Platform    bool
	Keys        []menuKey
	KeyTotal    int
	NewKey      *newKey
	Permissions []string
}

type menuTenant struct{ Name, Description string }

type menuKey struct {
	ID                            int64
	Name, Scope, Prefix, LastUsed string
	Revoked                       bool
}

type newKey struct{ Name, Value string }

func (s *server) menu(c *fiber.Ctx) error {
	v, err := s.menuView(c)
	if err != nil {
		return err
	}
	return render(c, fiber.StatusOK, "menu.html", v)
}

// menuView gathers what the menu shows to the signed-in administrator:
// the tenants it may see and, when it may manage them, the API keys.
func (s *server) menuView(c *fiber.Ctx) (*menuView, error) {
	ctx, p := c.UserContext(), principal(c)
	v := &menuView{page: page{Title: "Menu", Admin: p.username, Role: p.role, CSRF: p.session.CSRF}, Permissions: models.Permissions}
	tenants, total, err := s.Store.List(ctx, resourceNamed("tenants"), models.Owner{},
		models.Page{Limit: menuTenantLimit, Only: visibleTenants(p)})
	if err != nil {
		return nil, err
	}
	v.TenantTotal = total
	v.Platform = p.Platform()
	for _, t := range tenants {
		v.Tenants = append(v.Tenants, menuTenant{Name: str(t["tenant"]), Description: str(t["description"])})
	}
	// Keys are managed with platform credentials (ScopeKeys); a session is
	// never a tenant key.
	v.MayManageKeys = p.Platform() && p.Can("keys.manage")
	if !v.MayManageKeys {
		return v, nil
	}
	keys, total, err := s.Store.RecentKeys(ctx, menuKeyLimit) // live keys first, newest first
	if err != nil {
		return nil, err
	}
	v.KeyTotal = total
	for _, k := range keys {
		v.Keys = append(v.Keys, keyRow(k))
	}
	return v, nil
}

func keyRow(k models.Record) menuKey {
	id, _ := k["id"].(int64)
	scope := "platform"
	if t := str(k["tenant"]); t != "" {
		scope = "tenant " + t
		if e := str(k["extension"]); e != "" {
			scope = "extension " + e + " of " + t
		}
	}
	if perms, _ := k["permissions"].([]string); len(perms) > 0 {
		scope += " (" + strings.Join(perms, ", ") + ")"
	}
	last := str(k["last_used_at"])
	if last == "" {
		last = "never"
	}
	return menuKey{ID: id, Name: str(k["name"]), Scope: scope, Prefix: str(k["key_prefix"]), LastUsed: last, Revoked: k["revoked_at"] != nil}
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// resourceNamed is a registry resource the pages read.
func resourceNamed(name string) *models.Resource {
	for _, r := range models.Resources {
		if r.Name == name {
			return r
		}
	}
	panic("routes: no resource " + name)
}

// menuCreateKey creates a key with the same logic as POST /api/key/ and
// answers the menu with the value shown once.
func (s *server) menuCreateKey(c *fiber.Ctx) error {
	in := map[string]any{"name": c.FormValue("name")}
	for _, f := range []string{"tenant", "extension"} {
		if v := strings.TrimSpace(c.FormValue(f)); v != "" {
			in[f] = v
		}
	}
	var perms []any
	for _, v := range c.Request().PostArgs().PeekMulti("permissions") {
		perms = append(perms, string(v))
	}
	if len(perms) > 0 {
		in["permissions"] = perms
	}
	rec, keyErr := s.issueKey(c, in)
	var verr *models.ValidationError
	if keyErr != nil && !errors.As(keyErr, &verr) {
		return keyErr
	}
	v, err := s.menuView(c)
	if err != nil {
		return err
	}
	if verr != nil {
		v.Error = "The key was not created: " + validationText(verr)
		return render(c, fiber.StatusBadRequest, "menu.html", v)
	}
	v.NewKey = &newKey{Name: str(rec["name"]), Value: str(rec["key"])}
	c.Location("/api/key/" + itoa(rec["id"]))
	return render(c, fiber.StatusCreated, "menu.html", v)
}

// validationText words a validation error for a page.
func validationText(v *models.ValidationError) string {
	var parts []string
	for f, why := range v.Fields {
		parts = append(parts, f+" "+why)
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return v.Error()
	}
	return strings.Join(parts, "; ")
}

func (s *server) menuRevokeKey(c *fiber.Ctx) error {
	if err := s.withdrawKey(c, c.Params("id")); err != nil {
		return err
	}
	return c.Redirect("/#keys", fiber.StatusSeeOther)
}

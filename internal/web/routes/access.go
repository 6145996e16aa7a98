package routes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/models"
)

// Access is what a route declares about who may call it: the permission it
// needs, the scope it acts in and what a user key may do there. authorize,
// the one middleware that reads it, runs after authentication on every
// route with Auth API or KeyOnly; handlers hold no access checks of their
// own beyond data the route cannot see (which tenant a channel belongs to).
type Access struct {
	Perm string // config.read, config.write, keys.manage, calls.read, calls.control; "" = any
	// OwnPerm, when set, also lets a credential with only this grant in:
	// the handler then acts only on what the caller created, in chat
	// channels it belongs to (ownOnly; incoming_webhooks.manage_own).
	OwnPerm string
	Scope   Scope
	User    UserRule
}

// Scope is where a route acts.
type Scope int

// Scopes. The zero value is "undeclared": New refuses such a route.
const (
	scopeUndeclared Scope = iota
	// ScopePlatform: platform resources; platform credentials only.
	ScopePlatform
	// ScopeTenant: the path's :tenant must be in the credential's scope; the
	// resolved tenant is handed to the handler (tenantOwner).
	ScopeTenant
	// ScopeTenantObject: the path's :key names a tenant (GET /api/tenants/:key).
	ScopeTenantObject
	// ScopeVisible: any credential; the handler shows only the tenants the
	// credential may see (visibleTenants): the tenant list.
	ScopeVisible
	// ScopeQueryTenant: reads across tenants narrowed by ?tenant=; the
	// effective tenant ("" = all, platform only) is handed to the handler
	// (queryTenant). Channels, events, CDRs.
	ScopeQueryTenant
	// ScopeKeys: platform credentials, or a tenant key in its own tenant
	// (API key management).
	ScopeKeys
	// ScopeCalls: call actions and channel reads; the handler checks the
	// channel's tenant (and a user key's extension) with mayChannel.
	ScopeCalls
	// ScopeSelf: an administrator acting on its own account (MFA enrolment).
	ScopeSelf
)

// UserRule is what a user key (bound to one extension) may do on a route.
// The default is nothing.
type UserRule int

// User key rules.
const (
	UserNone UserRule = iota
	// UserOwnExtension: the path's :key must be the key's extension.
	UserOwnExtension
	// UserPhoneSettings: UserOwnExtension, and the JSON body may change only
	// what a phone user may (phoneUserFields).
	UserPhoneSettings
	// UserOwnCalls: call actions and channel reads as its own extension.
	UserOwnCalls
	// UserOwnMessages: chat messages sent as its own extension (the
	// handler checks the sender and the channel's rules).
	UserOwnMessages
	// UserOwnObjects: with the route's OwnPerm granted explicitly, the
	// objects the key created, in channels its extension belongs to.
	UserOwnObjects
)

// phoneUserFields are the extension fields a user key may change.
var phoneUserFields = map[string]bool{
	"voicemail_pin": true, "dnd": true,
	"forward_all": true, "forward_busy": true, "forward_no_answer": true, "forward_unregistered": true,
}

// Locals keys set by authorize.
const (
	ownerKey       = "tenant_owner"
	queryTenantKey = "query_tenant"
	ownOnlyKey     = "own_only"
)

func forbidden(msg string) error { return newError(fiber.StatusForbidden, "forbidden", msg) }

// authorize enforces a route's declared Access.
func (s *server) authorize(r Route) fiber.Handler {
	a := r.Access
	return func(c *fiber.Ctx) error {
		p := principal(c)
		own, err := p.permRefusal(a)
		if err != nil {
			return err
		}
		if own {
			c.Locals(ownOnlyKey, true)
		}
		if p.Kind == "user_key" {
			if err := userAllowed(c, p, a.User); err != nil {
				return err
			}
		}
		tenant := ""
		switch a.Scope {
		case ScopeTenant:
			tenant = strings.Clone(c.Params("tenant"))
		case ScopeTenantObject:
			tenant = strings.Clone(c.Params("key"))
		}
		if err := p.scopeRefusal(a, tenant); err != nil {
			return err
		}
		switch a.Scope {
		case ScopeTenant:
			o, err := s.Store.Tenant(c.UserContext(), tenant)
			if err != nil {
				return err
			}
			c.Locals(ownerKey, o)
		case ScopeQueryTenant:
			t, err := effectiveTenant(p, strings.Clone(c.Query("tenant")))
			if err != nil {
				return err
			}
			c.Locals(queryTenantKey, t)
		case scopeUndeclared:
			return fmt.Errorf("route %s %s declares no access scope", r.Method, r.Path)
		}
		return c.Next()
	}
}

// permRefusal is authorize's permission check of a declared access: nil
// when the principal holds the permission (own: only through OwnPerm, for
// its own objects). Pages ask it too, so they offer only what the API
// would allow.
func (p *Principal) permRefusal(a Access) (own bool, err error) {
	if p.mfaEnrolOnly && a.Scope != ScopeSelf {
		return false, newError(fiber.StatusForbidden, "mfa_enrolment_required", "this administrator must enrol a TOTP authenticator first (POST /api/mfa)")
	}
	switch {
	case a.OwnPerm != "" && (p.Kind == "user_key" || !p.Can(a.Perm)):
		// A user key never manages others' objects; it needs the
		// narrower grant given explicitly (its default is every grant).
		explicit := p.Kind != "user_key" || p.perms[a.OwnPerm]
		if !p.Can(a.OwnPerm) || !explicit {
			return false, forbidden("this credential lacks the permission " + a.Perm + " (or " + a.OwnPerm + ")")
		}
		return true, nil
	case a.Perm != "" && !p.Can(a.Perm):
		return false, forbidden("this credential lacks the permission " + a.Perm)
	}
	return false, nil
}

// scopeRefusal is authorize's scope check of a declared access; tenant is
// the tenant a tenant-scoped route acts in.
func (p *Principal) scopeRefusal(a Access, tenant string) error {
	switch a.Scope {
	case ScopePlatform:
		if !p.Platform() {
			return forbidden("platform resources need a platform credential")
		}
	case ScopeTenant, ScopeTenantObject:
		if !p.MayTenant(tenant) {
			return forbidden("this credential may not act in tenant " + tenant)
		}
	case ScopeKeys:
		if !p.Platform() && p.Kind != "tenant_key" {
			return forbidden("API keys are managed with a platform credential or a tenant key")
		}
	case ScopeSelf:
		if p.Kind != "admin" {
			return forbidden("only an administrator signed in with its password acts on its own account")
		}
	}
	return nil
}

// permits reports whether authorize would let the principal through a
// route declaring a, in tenant (pages hide what it would refuse).
func (p *Principal) permits(a Access, tenant string) bool {
	if _, err := p.permRefusal(a); err != nil {
		return false
	}
	return p.scopeRefusal(a, tenant) == nil
}

// userAllowed applies a route's user-key rule.
func userAllowed(c *fiber.Ctx, p *Principal, rule UserRule) error {
	switch rule {
	case UserOwnCalls, UserOwnMessages, UserOwnObjects:
		return nil
	case UserOwnExtension, UserPhoneSettings:
		if c.Params("key") != p.Extension {
			return forbidden("a user key acts only on its own extension " + p.Extension)
		}
		if rule == UserOwnExtension {
			return nil
		}
		var in map[string]json.RawMessage
		if err := json.NewDecoder(bytes.NewReader(c.Body())).Decode(&in); err != nil {
			return nil // the handler answers malformed bodies
		}
		for field := range in {
			if !phoneUserFields[field] {
				return forbidden("a user key may change only voicemail_pin, dnd and forwards, not " + field)
			}
		}
		return nil
	}
	return forbidden("a user key may act only as its own extension")
}

// effectiveTenant decides which tenant a cross-tenant read covers: a tenant
// or user key its own; a platform credential all ("") or ?tenant=; a
// tenant-scoped administrator one of theirs.
func effectiveTenant(p *Principal, want string) (string, error) {
	switch {
	case p.Kind == "tenant_key" || p.Kind == "user_key":
		if want != "" && !strings.EqualFold(want, p.Tenant) {
			return "", forbidden("this credential may not act in tenant " + want)
		}
		return p.Tenant, nil
	case p.Platform():
		return want, nil
	case want == "" && len(p.Tenants) == 1:
		return p.Tenants[0], nil
	case want == "" && len(p.Tenants) == 0:
		return "", forbidden("this credential is limited to no tenant")
	case want == "":
		return "", models.FieldError("tenant", "required for a credential limited to some tenants")
	case !p.MayTenant(want):
		return "", forbidden("this credential may not act in tenant " + want)
	}
	return want, nil
}

// tenantOwner is the tenant authorize resolved for a ScopeTenant route.
func tenantOwner(c *fiber.Ctx) models.Owner {
	o, _ := c.Locals(ownerKey).(models.Owner)
	return o
}

// queryTenant is the tenant authorize chose for a ScopeQueryTenant route.
func queryTenant(c *fiber.Ctx) string {
	t, _ := c.Locals(queryTenantKey).(string)
	return t
}

// mayChannel reports whether the principal may see or act on a channel:
// its tenant in scope, a tenant-less channel only for platform
// credentials, and for a user key only its own extension's channels.
func (p *Principal) mayChannel(tenant, extension string) bool {
	if tenant == "" {
		return p.Platform()
	}
	if !p.MayTenant(tenant) {
		return false
	}
	return p.Kind != "user_key" || extension == p.Extension
}

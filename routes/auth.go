package routes

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/models"
)

// Principal is who is calling: an administrator or an API key of some scope.
type Principal struct {
	Kind  string // "admin", "platform_key", "tenant_key", "user_key"
	Name  string // for created_by and logs
	KeyID int64
	// KeyScope identifies the API key in Redis (a prefix of its hash): it
	// stays unique even if a database is rebuilt and ids restart.
	KeyScope  string
	Tenant    string // tenant and user keys
	Extension string // user keys
	// Tenants limits a scoped administrator (nil: all tenants).
	Tenants []string
	// perms nil means every permission of the principal's scope.
	perms    map[string]bool
	readOnly bool
}

// Platform reports whether the principal may act on platform resources.
func (p *Principal) Platform() bool {
	return (p.Kind == "admin" && p.Tenants == nil) || p.Kind == "platform_key"
}

// Can reports whether the principal holds a permission.
func (p *Principal) Can(perm string) bool {
	if p.readOnly && perm != "config.read" && perm != "calls.read" {
		return false
	}
	return p.perms == nil || p.perms[perm]
}

// MayTenant reports whether the principal may act in a tenant (names compare
// case-insensitively, as the database does).
func (p *Principal) MayTenant(tenant string) bool {
	switch {
	case p.Kind == "tenant_key" || p.Kind == "user_key":
		return strings.EqualFold(p.Tenant, tenant)
	case p.Tenants != nil:
		for _, t := range p.Tenants {
			if strings.EqualFold(t, tenant) {
				return true
			}
		}
		return false
	}
	return true
}

// principal returns the authenticated caller.
func principal(c *fiber.Ctx) *Principal {
	p, _ := c.Locals(principalKey).(*Principal)
	return p
}

var errUnauthorized = newError(fiber.StatusUnauthorized, "unauthorized", "missing, invalid or revoked credentials")

// errAPIKeyRequired answers an Authorization header (Basic or other) on an
// action endpoint: those take API keys only (spec §5), so the caller learns
// to switch credential rather than suspecting a wrong password.
var errAPIKeyRequired = newError(fiber.StatusUnauthorized, "api_key_required",
	"this endpoint takes an API key in the X-API-Key header; HTTP Basic and other Authorization credentials are not accepted here")

// authenticator checks X-API-Key or HTTP Basic on every API request.
type authenticator struct {
	store *models.Store
	basic *basicCache
}

// middleware authenticates the request; allowBasic is false on action
// endpoints, which take API keys only (spec §5).
func (a *authenticator) middleware(allowBasic bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if allowBasic {
			c.Locals(basicChallengeKey, true)
		}
		ctx := c.UserContext()
		if key := c.Get("X-API-Key"); key != "" {
			p, err := a.byKey(ctx, key)
			if err != nil {
				return err
			}
			c.Locals(principalKey, p)
			return c.Next()
		}
		auth := c.Get(fiber.HeaderAuthorization)
		if !allowBasic && auth != "" {
			return errAPIKeyRequired
		}
		if allowBasic && strings.HasPrefix(auth, "Basic ") {
			user, pass, ok := parseBasic(auth)
			if !ok {
				return errUnauthorized
			}
			p, err := a.byPassword(ctx, user, pass)
			if err != nil {
				return err
			}
			c.Locals(principalKey, p)
			return c.Next()
		}
		return errUnauthorized
	}
}

func (a *authenticator) byKey(ctx context.Context, value string) (*Principal, error) {
	k, err := a.store.KeyByValue(ctx, value)
	if errors.Is(err, models.ErrNotFound) {
		return nil, errUnauthorized
	}
	if err != nil {
		return nil, err
	}
	a.store.TouchKey(ctx, k)
	p := &Principal{Kind: "platform_key", Name: "key:" + k.KeyPrefix, KeyID: k.ID, KeyScope: k.KeyHash[:32]}
	if k.Tenant.Valid {
		p.Kind, p.Tenant = "tenant_key", k.Tenant.String
		if k.Extension.Valid {
			p.Kind, p.Extension = "user_key", k.Extension.String
		}
	}
	if grants := k.Grants(); len(grants) > 0 {
		p.perms = map[string]bool{}
		for _, g := range grants {
			p.perms[g] = true
		}
	}
	return p, nil
}

func (a *authenticator) byPassword(ctx context.Context, user, pass string) (*Principal, error) {
	adm, err := a.store.AdminByUsername(ctx, user)
	if errors.Is(err, models.ErrNotFound) {
		models.CheckPassword(dummyHash(), pass) // same cost as a real check: no user enumeration by timing
		return nil, errUnauthorized
	}
	if err != nil {
		return nil, err
	}
	if !a.basic.check(adm.PasswordHash, user, pass) {
		return nil, errUnauthorized
	}
	p := &Principal{Kind: "admin", Name: "admin:" + adm.Username}
	switch adm.Role {
	case "tenant_admin", "reseller_admin":
		p.Tenants = nonNil(adm.Tenants())
	case "read_only":
		p.Tenants = adm.Tenants()
		p.readOnly = true
	}
	return p, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// dummyHash is a bcrypt hash of a random string, compared against when the
// user does not exist.
var dummyHash = sync.OnceValue(func() string {
	h, err := models.HashPassword(models.NewAPIKeyValue())
	if err != nil {
		panic(err)
	}
	return h
})

func parseBasic(header string) (user, pass string, ok bool) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(header, "Basic "))
	if err != nil {
		return "", "", false
	}
	user, pass, ok = strings.Cut(string(raw), ":")
	return user, pass, ok
}

// basicCache remembers successful bcrypt checks for a minute, keyed by the
// stored hash too, so a password change or reset invalidates it at once.
// bcrypt costs ~50 ms; without this every Basic request would pay it.
type basicCache struct {
	mu sync.Mutex
	ok map[string]time.Time
}

func newBasicCache() *basicCache { return &basicCache{ok: map[string]time.Time{}} }

func (b *basicCache) check(hash, user, pass string) bool {
	sum := sha256.Sum256([]byte(hash + "\x00" + user + "\x00" + pass))
	key := hex.EncodeToString(sum[:])
	b.mu.Lock()
	exp, hit := b.ok[key]
	b.mu.Unlock()
	if hit && time.Now().Before(exp) {
		return true
	}
	if !models.CheckPassword(hash, pass) {
		return false
	}
	b.mu.Lock()
	if len(b.ok) > 10000 {
		b.ok = map[string]time.Time{}
	}
	b.ok[key] = time.Now().Add(time.Minute)
	b.mu.Unlock()
	return true
}

// constantTimeEqual compares secrets without leaking their length or content by timing.
func constantTimeEqual(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}

// requireTenant checks the caller may act in the path's tenant and resolves it.
func (s *server) requireTenant(c *fiber.Ctx, perm string) (models.Owner, error) {
	p := principal(c)
	tenant := strings.Clone(c.Params("tenant"))
	if !p.MayTenant(tenant) {
		return models.Owner{}, newError(fiber.StatusForbidden, "forbidden", "this credential may not act in tenant "+tenant)
	}
	if !p.Can(perm) {
		return models.Owner{}, newError(fiber.StatusForbidden, "forbidden", "this credential lacks the permission "+perm)
	}
	o, err := s.Store.Tenant(c.UserContext(), tenant)
	if err != nil {
		return models.Owner{}, err
	}
	return o, nil
}

// requirePlatform checks the caller may act on platform resources.
func requirePlatform(c *fiber.Ctx, perm string) error {
	p := principal(c)
	if !p.Platform() {
		return newError(fiber.StatusForbidden, "forbidden", "platform resources need a platform credential")
	}
	if !p.Can(perm) {
		return newError(fiber.StatusForbidden, "forbidden", "this credential lacks the permission "+perm)
	}
	return nil
}

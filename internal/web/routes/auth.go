package routes

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"runtime"
	"strings"
	"sync"

	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/platform/metrics"
	"github.com/switchboard/switchboard/internal/web/websession"
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
	// adminID, username and role describe an administrator.
	adminID  int64
	username string
	role     string
	// mfaEnrolOnly marks an administrator with MFA switched on but no
	// authenticator enrolled: it may only enrol one.
	mfaEnrolOnly bool
	// totpStep is the time step of the TOTP code this request's Basic
	// credentials carried (0: none).
	totpStep int64
	// session is set when an administrator is signed in through a browser
	// session (cookie) instead of Basic: the same rights, plus a CSRF
	// token unsafe requests must echo.
	session *websession.Session
	// signedIn reports whether that session is still signed in
	// (errNoSession once it ended): event streams watch it.
	signedIn func(context.Context) error
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

// authenticator checks X-API-Key, HTTP Basic or the session cookie on
// every API request.
type authenticator struct {
	store    *models.Store
	basic    *basicCache
	limit    *limiter
	sessions *websession.Store
	failures *loginFailures
	totp     *totpSteps
}

// middleware authenticates the request; allowBasic is false on action
// endpoints, which take API keys only (spec §5).
func (a *authenticator) middleware(allowBasic bool) fiber.Handler {
	return func(c *fiber.Ctx) error {
		ctx := c.UserContext()
		key := c.Get("X-API-Key")
		auth := c.Get(fiber.HeaderAuthorization)
		// A browser session is taken wherever Basic is, when the request
		// names no other credential (the cookie is ambient; a header is
		// the caller's explicit choice). Its 401 carries no Basic
		// challenge, which would pop up the browser's password dialog.
		if allowBasic && key == "" && auth == "" {
			if id := c.Cookies(SessionCookie); id != "" {
				return a.sessionRequest(c, id, checkCSRFHeader)
			}
		}
		if allowBasic && key == "" && auth == "" && scriptRequest(c) {
			return errNoSession
		}
		if allowBasic {
			c.Locals(basicChallengeKey, true)
		}
		if key == "" && !allowBasic && auth != "" {
			return errAPIKeyRequired
		}
		useBasic := key == "" && allowBasic && strings.HasPrefix(auth, "Basic ")
		if key == "" && !useBasic {
			return errUnauthorized
		}
		// An address that keeps failing is refused before its guess costs a
		// bcrypt check. An API key costs one indexed read (no bcrypt), so
		// it is looked up beside the check rather than after it: the
		// request waits for one round trip, not two, and a blocked
		// address is refused all the same.
		addr := c.IP()
		var p *Principal
		var err error
		if useBasic {
			if retry, blocked := a.limit.authBlocked(ctx, addr); blocked {
				return tooMany(c, retry, "failed authentications from this address")
			}
			if user, pass, ok := parseBasic(auth); ok {
				if retry, blocked := a.limit.accountBlocked(ctx, user, addr); blocked {
					return tooMany(c, retry, "failed sign-ins to this account from addresses it has not signed in from")
				}
				p, err = a.byPassword(ctx, user, pass, c.Get("X-TOTP"), loginAttempt{Addr: addr, Via: "basic"})
				if errors.Is(err, errUnauthorized) || errors.Is(err, errMFARequired) {
					a.limit.accountFailed(ctx, user)
				} else if err == nil {
					a.limit.accountSucceeded(ctx, user, addr)
				}
			} else {
				err = errUnauthorized
			}
		} else {
			var blocked bool
			var retry time.Duration
			p, retry, blocked, err = a.keyUnlessBlocked(ctx, key, addr)
			if blocked {
				return tooMany(c, retry, "failed authentications from this address")
			}
		}
		if errors.Is(err, errUnauthorized) || errors.Is(err, errMFARequired) {
			if retry, blocked := a.limit.authFailed(ctx, addr); blocked {
				return tooMany(c, retry, "failed authentications from this address")
			}
		}
		if err != nil {
			return err
		}
		if retry, ok := a.limit.request(ctx, p.limitID()); !ok {
			return tooMany(c, retry, "requests with this credential")
		}
		c.Locals(principalKey, p)
		return c.Next()
	}
}

// scriptRequest reports whether a request comes from a page's script
// (fetch, EventSource) rather than from an API client or the address bar:
// browsers name the request's mode in Sec-Fetch-Mode, and the pages' own
// scripts send the CSRF header. Without credentials such a request is a
// page whose session is gone (sign-out clears the cookie): its 401 carries
// no Basic challenge, which would raise the browser's own password box
// over the page; the page offers its sign-in instead.
func scriptRequest(c *fiber.Ctx) bool {
	if c.Get(CSRFHeader) != "" {
		return true
	}
	mode := c.Get("Sec-Fetch-Mode")
	return mode != "" && mode != "navigate"
}

// keyUnlessBlocked looks the key up while the address's block is checked.
func (a *authenticator) keyUnlessBlocked(ctx context.Context, key, addr string) (*Principal, time.Duration, bool, error) {
	if !a.limit.blocks() {
		p, err := a.byKey(ctx, key)
		return p, 0, false, err
	}
	type found struct {
		p   *Principal
		err error
	}
	ch := make(chan found, 1)
	go func() {
		p, err := a.byKey(ctx, key)
		ch <- found{p, err}
	}()
	retry, blocked := a.limit.authBlocked(ctx, addr)
	f := <-ch
	return f.p, retry, blocked, f.err
}

// limitID names the principal for the per-credential request limit.
func (p *Principal) limitID() string {
	if p.Kind == "admin" {
		return p.Name
	}
	return "key:" + p.KeyScope
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

func (a *authenticator) byPassword(ctx context.Context, user, pass, code string, from loginAttempt) (*Principal, error) {
	_, p, err := a.checkAdmin(ctx, user, pass, code, from)
	return p, err
}

// checkAdmin checks an administrator's password and, when it enrolled an
// authenticator, its TOTP code (Basic requests and the login form). A
// failure is reported to system webhooks (administrator.login_failed).
func (a *authenticator) checkAdmin(ctx context.Context, user, pass, code string, from loginAttempt) (*models.Admin, *Principal, error) {
	adm, err := a.store.AdminByUsername(ctx, user)
	if errors.Is(err, models.ErrNotFound) {
		a.basic.verify(dummyHash(), pass) // same cost as a real check: no user enumeration by timing
		a.failures.record(ctx, from, user, false, "password")
		return nil, nil, errUnauthorized
	}
	if err != nil {
		return nil, nil, err
	}
	if !a.basic.check(adm.PasswordHash, user, pass) {
		a.failures.record(ctx, from, user, true, "password")
		return nil, nil, errUnauthorized
	}
	p, secret, err := a.adminPrincipal(adm)
	if err != nil {
		return nil, nil, err
	}
	if secret != "" {
		step, ok := mfaStep(code, secret, time.Now())
		if !ok {
			a.failures.record(ctx, from, user, true, "totp")
			return nil, nil, errMFARequired
		}
		p.totpStep = step
	}
	return adm, p, nil
}

// adminPrincipal is what an administrator may do, from its current record
// (Basic and sessions alike), and its TOTP secret when it enrolled one.
func (a *authenticator) adminPrincipal(adm *models.Admin) (*Principal, string, error) {
	p := &Principal{Kind: "admin", Name: "admin:" + adm.Username, adminID: adm.ID, username: adm.Username, role: adm.Role}
	secret := ""
	if adm.MFAEnabled {
		var err error
		if secret, err = a.store.AdminMFASecret(adm); err != nil {
			return nil, "", err
		}
		p.mfaEnrolOnly = secret == ""
	}
	switch adm.Role {
	case "tenant_admin", "reseller_admin":
		p.Tenants = nonNil(adm.Tenants())
	case "read_only":
		// Without tenants a read-only administrator sees nothing, like the
		// other tenant-scoped roles (nil would mean every tenant).
		p.Tenants = nonNil(adm.Tenants())
		p.readOnly = true
	}
	return p, secret, nil
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
	// metrics counts the bcrypt comparisons (tests assert that limits act
	// before them).
	metrics *metrics.Metrics
}

func newBasicCache(m *metrics.Metrics) *basicCache {
	return &basicCache{ok: map[string]time.Time{}, metrics: m}
}

func (b *basicCache) check(hash, user, pass string) bool {
	sum := sha256.Sum256([]byte(hash + "\x00" + user + "\x00" + pass))
	key := hex.EncodeToString(sum[:])
	b.mu.Lock()
	exp, hit := b.ok[key]
	b.mu.Unlock()
	if hit && time.Now().Before(exp) {
		return true
	}
	if !b.verify(hash, pass) {
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

// bcryptSlots bounds concurrent bcrypt checks to half the CPUs, so
// password guessing (from many addresses) queues instead of starving every
// other request, /healthz included, of CPU.
var bcryptSlots = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2))

// verify compares a password with its bcrypt hash, uncached.
func (b *basicCache) verify(hash, pass string) bool {
	bcryptSlots <- struct{}{}
	defer func() { <-bcryptSlots }()
	b.metrics.PasswordCheck()
	return models.CheckPassword(hash, pass)
}

// constantTimeEqual compares secrets without leaking their length or content by timing.
func constantTimeEqual(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}

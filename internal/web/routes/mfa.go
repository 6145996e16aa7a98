package routes

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
	"github.com/redis/go-redis/v9"
)

// TOTP for administrators. An administrator with mfa_enabled signs every
// Basic request with the current code in X-TOTP; one with mfa_enabled but
// no authenticator yet may only enrol (POST /api/mfa), which answers the
// secret and otpauth:// URL once and stores the secret sealed.

var errMFARequired = newError(fiber.StatusUnauthorized, "mfa_required", "this administrator needs the current TOTP code in the X-TOTP header")

var errMFACodeUsed = newError(fiber.StatusUnauthorized, "mfa_code_used", "this TOTP code was already used to sign in or enrol; send the next one")

// totpPeriod is the TOTP time step.
const totpPeriod = 30

// mfaStep checks a code against a secret, allowing one step of clock skew,
// and returns the time step it belongs to.
func mfaStep(code, secret string, now time.Time) (int64, bool) {
	if code == "" {
		return 0, false
	}
	for _, skew := range []int64{-1, 0, 1} {
		at := now.Add(time.Duration(skew*totpPeriod) * time.Second)
		ok, err := totp.ValidateCustom(code, secret, at, totp.ValidateOpts{Period: totpPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
		if err == nil && ok {
			return at.Unix() / totpPeriod, true
		}
	}
	return 0, false
}

// totpSteps remembers each administrator's last time step used to sign in
// or enrol, shared by every replica through Redis (this process's memory
// without Redis), so a code is good for one sign-in only.
type totpSteps struct {
	rdb    redis.UniversalClient
	prefix string

	mu    sync.Mutex
	local map[int64]int64
}

// totpStepTTL outlives any step a code can still be accepted for.
const totpStepTTL = 10 * time.Minute

// useStepScript sets the administrator's last step when step is newer.
var useStepScript = redis.NewScript(`
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if cur >= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`)

// use records step for the administrator; false when that step or a later
// one was already used (a replayed code).
func (s *totpSteps) use(ctx context.Context, adminID, step int64) (bool, error) {
	if s.rdb != nil {
		n, err := useStepScript.Run(ctx, s.rdb, []string{s.prefix + "totpstep:" + strconv.FormatInt(adminID, 10)},
			step, totpStepTTL.Milliseconds()).Int()
		return n == 1, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.local == nil {
		s.local = map[int64]int64{}
	}
	if s.local[adminID] >= step {
		return false, nil
	}
	s.local[adminID] = step
	return true, nil
}

func (s *server) enrolMFA(c *fiber.Ctx) error {
	p := principal(c)
	// Replacing an authenticator takes a code not used before, like a
	// sign-in: a replayed code cannot swap in an attacker's authenticator.
	if p.totpStep != 0 {
		if ok, err := s.auth.totp.use(c.UserContext(), p.adminID, p.totpStep); err != nil {
			return err
		} else if !ok {
			return errMFACodeUsed
		}
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: "Switchboard", AccountName: p.username})
	if err != nil {
		return err
	}
	if err := s.Store.SetAdminMFASecret(c.UserContext(), p.adminID, key.Secret()); err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(fiber.Map{"secret": key.Secret(), "otpauth_url": key.URL()})
}

// mfaSchemas are the OpenAPI shapes of the enrolment route.
var mfaSchemas = obj{
	"MFAEnrolment": obj{"type": "object", "required": []string{"secret", "otpauth_url"}, "properties": obj{
		"secret":      obj{"type": "string", "description": "base32 TOTP secret (SHA-1, 6 digits, 30 s); shown only in this response"},
		"otpauth_url": obj{"type": "string", "description": "otpauth:// URL for authenticator apps (QR code)"},
	}},
}

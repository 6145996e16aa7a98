package routes

import (
	"github.com/gofiber/fiber/v2"
	"github.com/pquerna/otp/totp"
)

// TOTP for administrators. An administrator with mfa_enabled signs every
// Basic request with the current code in X-TOTP; one with mfa_enabled but
// no authenticator yet may only enrol (POST /api/mfa), which answers the
// secret and otpauth:// URL once and stores the secret sealed.

var errMFARequired = newError(fiber.StatusUnauthorized, "mfa_required", "this administrator needs the current TOTP code in the X-TOTP header")

// mfaValid checks a code against a secret, allowing one step of clock skew.
func mfaValid(code, secret string) bool {
	return code != "" && totp.Validate(code, secret)
}

func (s *server) enrolMFA(c *fiber.Ctx) error {
	p := principal(c)
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

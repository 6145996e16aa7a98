package routes

import (
	_ "embed"

	"github.com/gofiber/fiber/v2"
)

// apiReferencePage is a self-contained page (no CDN: installations are
// often offline) that reads /api/openapi.json, lists every operation, has a
// tenant selector applied to all tenant paths, and sends test requests with
// the browser's credentials or an API key typed into the page.
//
//go:embed apiref.html
var apiReferencePage []byte

func (s *server) apiReference(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	c.Set("Content-Security-Policy", "default-src 'self'; script-src 'unsafe-inline' 'self'; style-src 'unsafe-inline'")
	return c.Send(apiReferencePage)
}

package routes

import (
	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/webui"
)

// webPage describes the visitor of a page. Until the login session exists
// the pages recognise an API key sent with the request.
func (s *server) webPage(c *fiber.Ctx) webui.Page {
	page := webui.Page{LoginURL: loginURL(c)}
	key := c.Get("X-API-Key")
	if key == "" {
		return page
	}
	p, err := s.auth.byKey(c.UserContext(), key)
	if err != nil {
		return page
	}
	page.SignedIn, page.User, page.Platform = true, p.Name, p.Platform()
	return page
}

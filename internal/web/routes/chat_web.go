package routes

import (
	"errors"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/comms/chat/webclient"
	"github.com/switchboard/switchboard/internal/models"
)

// chatWebClientRoutes serve the team-chat web client at the provisioning
// bundle's login_url (<base>/chat/): the embedded converse.js, its start
// script and the generated config.json naming this installation's chat
// WebSocket and domains. No credentials: the client logs in to ejabberd
// itself with the bundle's username and password.
func chatWebClientRoutes(d ChatDeps) []Route {
	r := &chatRoutes{d}
	return []Route{
		{Method: "GET", Path: "/chat/", Summary: "Team-chat web client (converse.js, embedded): log in with a provisioning bundle's connect.username and connect.password; /chat redirects here", Tag: "chat", Produces: "text/html", Answers: map[int]string{308: "Empty"}, Handler: r.webClientPage},
		{Method: "GET", Path: "/chat/start.js", Summary: "The web client's start script", Tag: "chat", Produces: "text/javascript", Handler: r.webClientFile("start.js")},
		{Method: "GET", Path: "/chat/config.json", Summary: "The web client's settings: the chat WebSocket URL and domains, and the name and branding it shows (of the tenant named, else the installation's name)", Tag: "chat", Response: "ChatClientConfig", Query: []string{"tenant"}, Handler: r.webClientConfig},
		{Method: "GET", Path: "/chat/avatars/webhooks/:id/:file", Summary: "An incoming webhook's picture (256×256 PNG); the URL its picture field reads as", Tag: "chat", Produces: "image/png", Handler: r.webhookPicture},
		{Method: "GET", Path: "/chat/dist/*", Wildcard: "file", Summary: "The web client's files (converse.js " + strings.TrimPrefix(webclient.Version(), "converse.js@") + ", vendored)", Tag: "chat", Produces: "text/javascript,text/css,application/json,font/ttf,image/png,image/svg+xml,image/vnd.microsoft.icon,text/plain", Handler: r.webClientAsset},
	}
}

func (r *chatRoutes) webSettings() webclient.Settings {
	cfg := r.Chat.Config()
	return webclient.Settings{WebSocketURL: cfg.WSURL, Domain: cfg.Domain, MUCDomain: cfg.MUCDomain}
}

// webClientFile answers one of the client's pages under its CSP; without
// a chat server there is nothing to log in to (503 chat_unavailable).
func (r *chatRoutes) webClientFile(name string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		if err := r.chatReady(); err != nil {
			return err
		}
		body, ct, _ := webclient.File(name)
		c.Set(fiber.HeaderContentType, ct)
		c.Set("Content-Security-Policy", r.webSettings().ContentSecurityPolicy())
		c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
		c.Set(fiber.HeaderCacheControl, "no-cache")
		return c.Send(body)
	}
}

// webClientPage answers the page at /chat/; /chat (which the router also
// takes) is redirected there, so the page's relative URLs resolve.
func (r *chatRoutes) webClientPage(c *fiber.Ctx) error {
	if p, _, _ := strings.Cut(c.OriginalURL(), "?"); !strings.HasSuffix(p, "/") {
		return c.Redirect("/chat/", fiber.StatusPermanentRedirect)
	}
	return r.webClientFile("index.html")(c)
}

func (r *chatRoutes) webClientConfig(c *fiber.Ctx) error {
	if err := r.chatReady(); err != nil {
		return err
	}
	s := r.webSettings()
	if err := r.clientBranding(c.UserContext(), &s, c.Query("tenant")); err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSONCharsetUTF8)
	c.Set(fiber.HeaderCacheControl, "no-cache")
	return c.Send(s.ConfigJSON())
}

// webhookPicture serves a webhook's stored picture. The URL carries the
// picture's content hash, so it is immutable: a new picture has a new URL.
func (r *chatRoutes) webhookPicture(c *fiber.Ctx) error {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	hash, ok := strings.CutSuffix(c.Params("file"), ".png")
	if err != nil || !ok {
		return newError(fiber.StatusNotFound, "not_found", "no such picture")
	}
	png, err := r.Store.WebhookPicture(c.UserContext(), id, hash)
	if errors.Is(err, models.ErrNotFound) {
		return newError(fiber.StatusNotFound, "not_found", "no such picture")
	}
	if err != nil {
		return err
	}
	c.Set(fiber.HeaderContentType, "image/png")
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderCacheControl, "public, max-age=31536000, immutable")
	return c.Send(png)
}

// webClientAsset serves the vendored files; they change only with a new
// binary, so browsers revalidate them (no-cache) rather than keep stale ones.
func (r *chatRoutes) webClientAsset(c *fiber.Ctx) error {
	body, ct, ok := webclient.File("dist/" + c.Params("*"))
	if !ok {
		return newError(fiber.StatusNotFound, "not_found", "no such web client file")
	}
	c.Set(fiber.HeaderContentType, ct)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderCacheControl, "no-cache")
	c.Set(fiber.HeaderETag, `"`+webclient.Version()+`"`)
	if c.Get(fiber.HeaderIfNoneMatch) == `"`+webclient.Version()+`"` {
		return c.SendStatus(fiber.StatusNotModified)
	}
	return c.Send(body)
}

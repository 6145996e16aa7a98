package routes

import (
	"path"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/media"
	"github.com/switchboard/switchboard/internal/models"
)

// promptAudioRoute serves a voice prompt's stored recording to API clients
// and the configuration manager's player, under the prompts' own read
// access (the nodes fetch the same file at /fs/media with their signature).
func (m *mediaRoutes) promptAudioRoute() Route {
	return Route{Method: "GET", Path: "/api/tenants/:tenant/voice_prompts/:id/audio", Summary: "Download a voice prompt's recording (the stored 16 kHz mono WAV; Range requests answered 206; 404 for a prompt without one)", Tag: "voice_prompts",
		Auth: AuthAPI, Access: crudAccess(resourceNamed("voice_prompts"), "get"), Produces: "audio/wav", Ranges: true, Handler: m.promptAudio}
}

func (m *mediaRoutes) promptAudio(c *fiber.Ctx) error {
	o := tenantOwner(c)
	rec, err := m.svc.Store.Get(c.UserContext(), resourceNamed("voice_prompts"), o, c.Params("id"))
	if err != nil {
		return err
	}
	file := str(rec["filename"])
	dir, err := media.Dir(o.Tenant)
	if file == "" || err != nil {
		return models.ErrNotFound
	}
	return m.serveFile(c, path.Join(dir, file))
}

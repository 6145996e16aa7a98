package routes

import (
	"errors"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/comms/fax"
	"github.com/switchboard/switchboard/internal/freeswitch/fsxml"
	"github.com/switchboard/switchboard/internal/freeswitch/naming"
)

// faxRoutes take the faxes FreeSWITCH nodes upload after rxfax (special
// endpoints of application fax_to_email).
type faxRoutes struct {
	svc *fax.Service
	xml *fsxml.Service
	max int
}

// faxUploadRoutes declares the upload endpoint; maxBytes is the largest fax (413
// beyond it, before the body is read).
func faxUploadRoutes(svc *fax.Service, xml *fsxml.Service, maxBytes int) []Route {
	f := &faxRoutes{svc: svc, xml: xml, max: maxBytes}
	return []Route{
		{Method: "PUT", Path: "/fs/fax/:tenant/:endpoint/:call", Summary: "A received fax from a FreeSWITCH node (mod_http_cache http_put from the call's api_hangup_hook; the rendered URL's per-call sig): stored and queued for e-mail to the endpoint's fax_email (201; 200 for a repeated upload of the same call; 413 over the size limit, 415 not a TIFF)",
			Tag: "freeswitch", Auth: AuthCustom, Query: []string{"sig"}, Request: "FaxUpload", Consumes: "image/tiff, application/octet-stream",
			Response: "FaxReceived", Status: 201, Answers: map[int]string{200: "FaxReceived"}, BodyLimit: maxBytes, Handler: f.upload},
	}
}

// faxSchemas are the OpenAPI shapes of faxUploadRoutes.
func faxSchemas() map[string]any {
	return map[string]any{
		"FaxUpload": obj{"type": "string", "contentMediaType": "image/tiff", "description": "the TIFF file rxfax wrote (checked from its bytes)"},
		"FaxReceived": obj{"type": "object", "required": []string{"id", "endpoint_id", "call_uuid", "size_bytes", "pages", "status", "attempts", "created_at"}, "properties": obj{
			"id": obj{"type": "integer"}, "endpoint_id": obj{"type": "integer"}, "call_uuid": obj{"type": "string"},
			"size_bytes": obj{"type": "integer"}, "pages": obj{"type": "integer", "description": "pages (image directories) in the TIFF"},
			"status":     obj{"type": "string", "enum": []string{fax.StatusQueued, fax.StatusSent, fax.StatusFailed}},
			"attempts":   obj{"type": "integer", "description": "e-mail delivery attempts so far"},
			"created_at": obj{"type": "string", "format": "date-time"},
		}},
	}
}

func (f *faxRoutes) upload(c *fiber.Ctx) error {
	tenant, call := c.Params("tenant"), c.Params("call")
	endpoint, err := strconv.ParseInt(c.Params("endpoint"), 10, 64)
	if err != nil || endpoint <= 0 || !naming.ValidCallUUID(call) {
		return newError(fiber.StatusNotFound, "not_found", "no such fax upload address")
	}
	if err := f.xml.AuthorizeFax(c.Context().RemoteIP(), naming.FaxPath(tenant, endpoint, call), c.Query("sig")); err != nil {
		if errors.Is(err, fsxml.ErrUnauthorized) {
			return newError(fiber.StatusUnauthorized, "unauthorized", "a fax upload needs the signed URL rendered for its call")
		}
		return newError(fiber.StatusForbidden, "forbidden", "this address may not upload faxes")
	}
	// A limit under the server's default is not enforced while the body
	// is read (only larger route limits are): checked here.
	if len(c.Body()) > f.max {
		return newError(fiber.StatusRequestEntityTooLarge, "fax_too_large", "the fax is over this server's limit")
	}
	got, created, err := f.svc.Receive(c.UserContext(), tenant, endpoint, call, c.Body())
	switch {
	case errors.Is(err, fax.ErrNotTIFF):
		return newError(fiber.StatusUnsupportedMediaType, "unsupported_media_type", "the upload is not a TIFF file")
	case errors.Is(err, fax.ErrNoEndpoint):
		return newError(fiber.StatusNotFound, "not_found", "the tenant has no fax_to_email endpoint with this id")
	case err != nil:
		return err
	}
	status := fiber.StatusCreated
	if !created {
		status = fiber.StatusOK
	}
	return c.Status(status).JSON(got)
}

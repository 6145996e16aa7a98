package routes

import (
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/media"
)

// voicemailImportRoutes declares POST /api/tenants/<tenant>/imports/voicemail
// (resources.md §5.2): a message filed into an extension's or special
// mailbox's box, idempotent by external_id, delivered to FreeSWITCH's
// mod_voicemail on every node by media.VoicemailDelivery.
func voicemailImportRoutes(svc *media.Service) []Route {
	upload := int(svc.Lib.MaxBytes/3*4) + 1<<20
	h := func(c *fiber.Ctx) error {
		raw, err := decodeObject(c)
		if err != nil {
			return err
		}
		if v, ok := raw["read"].(string); ok { // multipart fields are text
			if b, err := strconv.ParseBool(v); err == nil {
				raw["read"] = b
			}
		}
		var in media.VoicemailImport
		if err := remarshal(raw, &in); err != nil {
			return err
		}
		msg, created, err := svc.ImportVoicemail(c.UserContext(), tenantOwner(c), in)
		if err != nil {
			return mediaError(err)
		}
		body := struct {
			media.VoicemailMessage
			Created bool `json:"created"`
		}{msg, created}
		if created {
			return c.Status(fiber.StatusCreated).JSON(body)
		}
		return c.JSON(body)
	}
	return []Route{{Method: "POST", Path: "/api/tenants/:tenant/imports/voicemail",
		Summary: "Import a voicemail message into an extension's or special mailbox's box, idempotent by external_id (201 new, 200 repeat, 409 same external_id with other content; 413 over the size limit, 415 not WAV, MP3, OGG or FLAC); every connected FreeSWITCH node files it with vm_inject",
		Tag:     "imports", Auth: AuthAPI, Access: importAccess,
		Request: "VoicemailImport", Response: "VoicemailImported", Status: 201, Answers: map[int]string{200: "VoicemailImported"},
		Consumes: uploadTypes, BodyLimit: upload, Handler: h}}
}

// voicemailImportSchemas are the OpenAPI shapes of voicemailImportRoutes.
func voicemailImportSchemas() map[string]any {
	str, integer := obj{"type": "string"}, obj{"type": "integer"}
	folder := obj{"type": "string", "enum": []string{"inbox", "old", "saved"}}
	return map[string]any{
		"VoicemailImport": obj{"type": "object", "additionalProperties": false, "required": []string{"mailbox", "audio_base64", "external_id"},
			"properties": obj{
				"mailbox":          obj{"type": "string", "description": "an extension name or special-mailbox number of the tenant"},
				"folder":           obj{"type": "string", "enum": []string{"inbox", "old", "saved"}, "description": "default inbox; old and saved are filed as heard"},
				"when":             obj{"type": "string", "description": "ISO 8601 with Z or an offset; default now (kept here; FreeSWITCH dates the message at its filing)"},
				"caller_id_name":   obj{"type": "string", "maxLength": 64},
				"caller_id_number": str,
				"duration":         obj{"type": "integer", "minimum": 0, "description": "seconds; default the audio's length"},
				"audio_base64":     obj{"type": "string", "description": "WAV, MP3, OGG or FLAC, detected from the bytes"},
				"read":             obj{"type": "boolean", "description": "default false"},
				"external_id":      obj{"type": "string", "minLength": 1, "maxLength": 128},
			}},
		"VoicemailImported": obj{"type": "object", "required": []string{"id", "tenant", "external_id", "mailbox", "folder", "when", "duration", "read", "created"},
			"properties": obj{
				"id": integer, "tenant": str, "external_id": str, "mailbox": str, "folder": folder,
				"when": obj{"type": "string", "format": "date-time"}, "caller_id_name": str, "caller_id_number": str,
				"duration": obj{"type": "integer", "description": "seconds"}, "read": obj{"type": "boolean"},
				"source_format": obj{"type": "string", "enum": []string{"wav", "mp3", "ogg", "flac"}},
				"size_bytes":    integer, "duration_ms": obj{"type": "integer", "description": "of the stored 16 kHz mono WAV"},
				"created": obj{"type": "boolean", "description": "false when an earlier import with the same content is answered"},
			}},
	}
}

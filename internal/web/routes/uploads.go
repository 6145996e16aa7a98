package routes

import (
	"encoding/base64"
	"fmt"
	"io"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/models"
)

// Audio arrives as audio_base64 in JSON, or as multipart/form-data with the
// file in a part named "audio" and the other fields as text parts.
const (
	audioField    = "audio_base64"
	audioFilePart = "audio"
	uploadTypes   = fiber.MIMEApplicationJSON + ", " + fiber.MIMEMultipartForm
)

// withUpload lets a create route of a resource with an audio_base64 input
// take multipart bodies as large as that field allows.
func withUpload(res *models.Resource, r Route) Route {
	if f := res.Field(audioField); f != nil && f.MaxLen > 0 {
		r.Consumes = uploadTypes
		r.BodyLimit = f.MaxLen + 1<<16
	}
	return r
}

// decodeMultipart reads a multipart body as the JSON object it stands for:
// text parts as string fields, the "audio" file part as audio_base64.
func decodeMultipart(c *fiber.Ctx) (map[string]any, error) {
	form, err := c.MultipartForm()
	if err != nil {
		return nil, newError(fiber.StatusBadRequest, "invalid_multipart", "request body must be multipart/form-data with text fields and an audio file part")
	}
	in := map[string]any{}
	for name, values := range form.Value {
		if len(values) != 1 {
			return nil, models.FieldError(name, "must be given once")
		}
		in[name] = values[0]
	}
	for name, files := range form.File {
		if name != audioFilePart || len(files) != 1 {
			return nil, models.FieldError(name, "is not a file part this endpoint takes (one part named %q)", audioFilePart)
		}
		f, err := files[0].Open()
		if err != nil {
			return nil, fmt.Errorf("open multipart audio: %w", err)
		}
		b, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read multipart audio: %w", err)
		}
		in[audioField] = base64.StdEncoding.EncodeToString(b)
	}
	return in, nil
}

package routes

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/switchboard/switchboard/internal/freeswitch/fsxml"
	"github.com/switchboard/switchboard/internal/media"
	"github.com/switchboard/switchboard/internal/models"
)

// mediaRoutes serve imports of recordings, the recordings report and
// downloads, and media files to FreeSWITCH nodes.
type mediaRoutes struct {
	svc     *media.Service
	xml     *fsxml.Service
	baseURL string
}

// Access of the media routes: imports write tenant configuration; the
// report and downloads are call data (calls.read), like CDRs.
var (
	importAccess  = Access{Perm: "config.write", Scope: ScopeTenant}
	recordingRead = Access{Perm: "calls.read", Scope: ScopeTenant}
	importJobRead = Access{Perm: "config.read", Scope: ScopeTenant}
	// recordingsQuery is the recordings report's query (its page offers
	// the same filters).
	recordingsQuery = []string{"tenant", "from", "to", "extension", "number", "limit", "offset"}
)

// mediaLibraryRoutes declares the media endpoints (routeTable). xml authorises
// FreeSWITCH nodes exactly as /fs/xml does.
func mediaLibraryRoutes(svc *media.Service, xml *fsxml.Service, baseURL string) []Route {
	m := &mediaRoutes{svc: svc, xml: xml, baseURL: strings.TrimRight(baseURL, "/")}
	upload := int(svc.Lib.MaxBytes/3*4) + 1<<20 // base64 of the largest audio, and the other fields
	return []Route{
		{Method: "POST", Path: "/api/tenants/:tenant/recordedcalls", Summary: "Import a call recording, idempotent by external_id (201 new, 200 repeat, 409 same external_id with other content; 413 over the size, duration or tenant storage limit, 415 not WAV, MP3, OGG or FLAC)", Tag: "imports", Auth: AuthAPI, Access: importAccess,
			Request: "RecordingImport", Response: "RecordingImported", Status: 201, Answers: map[int]string{200: "RecordingImported"}, Consumes: uploadTypes, BodyLimit: upload, Handler: m.importRecording},
		{Method: "GET", Path: "/api/reports/recordings", Summary: "Imported call recordings, newest first; from/to (RFC 3339) bound the call start, extension and number (src or dst) filter", Tag: "reports", Auth: AuthAPI, Access: callsRead,
			Response: "RecordingList", Query: recordingsQuery, Handler: m.listRecordings},
		{Method: "GET", Path: "/api/tenants/:tenant/recordedcalls/:id/audio", Summary: "Download a recording (16 kHz mono WAV; Range requests answered 206)", Tag: "reports", Auth: AuthAPI, Access: recordingRead, Produces: "audio/wav", Ranges: true, Handler: m.downloadRecording},
		{Method: "POST", Path: "/api/tenants/:tenant/imports/cdrs", Summary: "Import CDRs: JSON {records: [...]} (1-1000, answered at once with created, duplicates, conflicts and failed rows; a record whose external_id was imported with other content is a failed row with code conflict naming the fields), or a CSV (header row) or JSON Lines file of any length, run as a resumable job (202 with the job; Location; 413 storage_quota_exceeded when the spooled file would take the tenant over max_storage_mb)", Tag: "imports", Auth: AuthAPI, Access: importAccess,
			Request: "CDRImport", Response: "CDRImportSummary", Answers: map[int]string{202: "ImportJob"}, Consumes: "application/json, text/csv, application/x-ndjson", BodyLimit: upload, Handler: m.importCDRs},
		{Method: "GET", Path: "/api/tenants/:tenant/imports/:id", Summary: "An import job: status (running, done, failed), progress and the first 100 refused rows with their reasons", Tag: "imports", Auth: AuthAPI, Access: importJobRead,
			Response: "ImportJob", Handler: m.getJob},
		{Method: "POST", Path: "/api/tenants/:tenant/music_on_hold/:id/files", Summary: "Add a file to a music-on-hold class, converted to the class's rate, idempotent by external_id (201 new, 200 repeat, 409 other content; 413 over the size, duration or tenant storage limit); the nodes reload the stream", Tag: "music_on_hold", Auth: AuthAPI, Access: importAccess,
			Request: "MOHFileImport", Response: "MOHFileImported", Status: 201, Answers: map[int]string{200: "MOHFileImported"}, Consumes: uploadTypes, BodyLimit: upload, Handler: m.importMOHFile},
		m.promptAudioRoute(),
		{Method: "GET", Path: "/fs/media/:tenant/:file", Summary: "A voice prompt for FreeSWITCH nodes (mod_http_cache; the rendered URL's sig, or the /fs/xml credentials)", Tag: "freeswitch", Auth: AuthCustom, Produces: "audio/wav", Ranges: true, Query: []string{"sig"}, Handler: m.nodeFile},
		{Method: "GET", Path: "/fs/media/:tenant/moh/:class/:file", Summary: "A music-on-hold file for FreeSWITCH nodes (the rendered URL's sig, or the /fs/xml credentials)", Tag: "freeswitch", Auth: AuthCustom, Produces: "audio/wav", Ranges: true, Query: []string{"sig"}, Handler: m.nodeFile},
	}
}

// mediaSchemas are the OpenAPI shapes of mediaLibraryRoutes.
func mediaSchemas() map[string]any {
	str, integer := obj{"type": "string"}, obj{"type": "integer"}
	recording := obj{"type": "object", "properties": obj{
		"id": integer, "tenant": str, "external_id": str, "when": obj{"type": "string", "format": "date-time"},
		"type": str, "src": str, "dst": str, "extension": str, "direction": str,
		"duration":      obj{"type": "integer", "description": "seconds, as imported"},
		"source_format": obj{"type": "string", "enum": []string{"wav", "mp3", "ogg", "flac"}},
		"size_bytes":    integer, "duration_ms": obj{"type": "integer", "description": "of the stored 16 kHz mono WAV"},
		"download_url": str,
	}, "required": []string{"id", "external_id", "when", "type", "src", "dst", "duration", "size_bytes", "download_url"}}
	imported := obj{"type": "object", "properties": obj{}, "required": []string{"id", "external_id", "created", "duration", "size_bytes"}}
	for k, v := range recording["properties"].(obj) {
		imported["properties"].(obj)[k] = v
	}
	imported["properties"].(obj)["created"] = obj{"type": "boolean", "description": "false when an earlier import with the same content is answered"}
	rowError := obj{"type": "object", "properties": obj{"row": obj{"type": "integer", "description": "1-based line of data (file) or 0-based index (records)"}, "external_id": str, "code": str, "error": str}}
	cdr := obj{"type": "object", "additionalProperties": false, "required": []string{"external_id", "start", "duration", "src", "dst", "direction", "disposition"}, "properties": obj{
		"external_id": obj{"type": "string", "minLength": 1, "maxLength": 128}, "start": str, "answer": str, "end": str,
		"duration": obj{"type": "integer", "minimum": 0}, "billsec": obj{"type": "integer", "minimum": 0},
		"src": str, "dst": str, "caller_id_name": str,
		"direction":    obj{"type": "string", "enum": []string{"inbound", "outbound", "internal"}},
		"disposition":  obj{"type": "string", "enum": []string{"answered", "no_answer", "busy", "failed"}},
		"hangup_cause": str, "extension": str, "did": str, "queue": str, "accountcode": str, "recording_external_id": str,
	}}
	return map[string]any{
		"CDRImport": obj{"type": "object", "additionalProperties": false, "required": []string{"records"}, "properties": obj{
			"records": obj{"type": "array", "minItems": 1, "maxItems": media.MaxSyncCDRs, "items": cdr}}},
		"CDRImportSummary": obj{"type": "object", "required": []string{"created", "duplicates", "conflicts", "failed"}, "properties": obj{
			"created": integer, "duplicates": obj{"type": "integer", "description": "records already imported with the same content (nothing changed)"},
			"conflicts": obj{"type": "integer", "description": "records whose external_id was imported before with other content; each is in failed with code conflict, naming the fields that differ"},
			"failed":    obj{"type": "array", "items": rowError}}},
		"ImportJob": obj{"type": "object", "required": []string{"id", "status", "rows_done", "created", "duplicates", "failed", "conflicts", "errors"}, "properties": obj{
			"id": integer, "tenant": str, "kind": obj{"type": "string", "enum": []string{"cdrs"}}, "format": obj{"type": "string", "enum": []string{"csv", "jsonl"}},
			"status":       obj{"type": "string", "enum": []string{media.JobRunning, media.JobDone, media.JobFailed}},
			"source_bytes": integer, "bytes_done": integer, "rows_done": integer, "created": integer, "duplicates": integer, "failed": integer,
			"conflicts": obj{"type": "integer", "description": "refused rows (counted in failed) whose external_id was imported before with other content"},
			"error":     str, "created_at": str, "updated_at": str, "finished_at": obj{"type": []string{"string", "null"}},
			"errors": obj{"type": "array", "items": rowError}}},
		"RecordingImport": obj{"type": "object", "additionalProperties": false, "required": []string{"audio_base64", "when", "type", "src", "dst", "duration", "external_id"},
			"properties": obj{
				"audio_base64": obj{"type": "string", "description": "WAV, MP3, OGG or FLAC, detected from the bytes"},
				"when":         obj{"type": "string", "description": "call start, ISO 8601 with Z or an offset; at most 5 minutes ahead"},
				"type":         obj{"type": "string", "enum": []string{"extension"}},
				"src":          str, "dst": str,
				"duration":    obj{"type": "integer", "minimum": 0, "description": "seconds"},
				"external_id": obj{"type": "string", "minLength": 1, "maxLength": 128},
				"extension":   obj{"type": "string", "description": "default: whichever of src, dst is an extension of the tenant"},
				"direction":   obj{"type": "string", "enum": []string{"inbound", "outbound", "internal"}},
			}},
		"RecordingImported": imported,
		"MOHFileImport": obj{"type": "object", "additionalProperties": false, "required": []string{"audio_base64", "external_id"}, "properties": obj{
			"filename_hint": obj{"type": "string", "maxLength": 255, "description": "informative only: the server names the file"},
			"audio_base64":  obj{"type": "string", "description": "WAV, MP3, OGG or FLAC, detected from the bytes"},
			"external_id":   obj{"type": "string", "minLength": 1, "maxLength": 128}}},
		"MOHFileImported": obj{"type": "object", "required": []string{"id", "class_id", "external_id", "filename", "created"}, "properties": obj{
			"id": integer, "class_id": integer, "external_id": str, "filename": str,
			"source_format": obj{"type": "string", "enum": []string{"wav", "mp3", "ogg", "flac"}},
			"duration_ms":   integer, "size_bytes": integer, "created": obj{"type": "boolean"}}},
		"RecordingList": obj{"type": "array", "items": recording},
	}
}

// nodeRefusal is the answer to a node fetch fsxml refused.
func nodeRefusal(c *fiber.Ctx, err error) error {
	if errors.Is(err, fsxml.ErrUnauthorized) {
		c.Locals(basicChallengeKey, true)
		return newError(fiber.StatusUnauthorized, "unauthorized", "FreeSWITCH media needs its signed URL or the /fs/xml credentials")
	}
	return newError(fiber.StatusForbidden, "forbidden", "this address may not fetch FreeSWITCH media")
}

// limitCodes are the codes of the media limits' 413 answers.
var limitCodes = map[error]string{
	media.ErrTooLarge: "audio_too_large",
	media.ErrTooLong:  "audio_too_long",
	media.ErrQuota:    "storage_quota_exceeded",
}

// mediaError maps the media package's refusals to API errors.
func mediaError(err error) error {
	var ce *media.ConflictError
	var le *media.LimitError
	switch {
	case errors.As(err, &ce):
		return newError(fiber.StatusConflict, "conflict", ce.Error())
	case errors.As(err, &le):
		return newError(fiber.StatusRequestEntityTooLarge, limitCodes[le.Err], le.Msg)
	case errors.Is(err, media.ErrTooLarge):
		return newError(fiber.StatusRequestEntityTooLarge, "audio_too_large", "the decoded audio is over this server's limit")
	case errors.Is(err, media.ErrUnsupported):
		return newError(fiber.StatusUnsupportedMediaType, "unsupported_audio", "the audio is not WAV, MP3, OGG or FLAC")
	case errors.Is(err, media.ErrUndecodable):
		return newError(fiber.StatusUnsupportedMediaType, "undecodable_audio", "the audio could not be decoded")
	case errors.Is(err, media.ErrBadBase64):
		return models.FieldError("audio_base64", "is not valid base64")
	case errors.Is(err, models.ErrNoAudioStore):
		return newError(fiber.StatusServiceUnavailable, "media_unavailable", err.Error())
	}
	return err
}

// recordingOut is a recording as the API shows it, with its download URL.
type recordingOut struct {
	media.Recording
	DownloadURL string `json:"download_url"`
}

func (m *mediaRoutes) out(r media.Recording) recordingOut {
	return recordingOut{Recording: r, DownloadURL: m.baseURL + "/api/tenants/" + r.Tenant + "/recordedcalls/" + strconv.FormatInt(r.ID, 10) + "/audio"}
}

func (m *mediaRoutes) importRecording(c *fiber.Ctx) error {
	raw, err := decodeObject(c)
	if err != nil {
		return err
	}
	var in media.RecordingImport
	if err := remarshal(raw, &in); err != nil {
		return err
	}
	o := tenantOwner(c)
	rec, created, err := m.svc.ImportRecording(c.UserContext(), o, in)
	if err != nil {
		return mediaError(err)
	}
	body := struct {
		recordingOut
		Created bool `json:"created"`
	}{m.out(rec), created}
	if created {
		c.Location(body.DownloadURL)
		return c.Status(fiber.StatusCreated).JSON(body)
	}
	return c.JSON(body)
}

// remarshal turns a decoded object (JSON or multipart, all text) into v,
// refusing unknown fields; multipart numbers arrive as text and are read.
func remarshal(raw map[string]any, v any) error {
	for k, val := range raw {
		if s, ok := val.(string); ok && k == "duration" {
			if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				raw[k] = n
			}
		}
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return newError(fiber.StatusBadRequest, "bad_request", "body must be a JSON object with the documented fields: "+err.Error())
	}
	return nil
}

func (m *mediaRoutes) listRecordings(c *fiber.Ctx) error {
	tenant, page, err := scopedPage(c)
	if err != nil {
		return err
	}
	f := media.RecordingFilter{Tenant: tenant, Page: page, Extension: c.Query("extension"), Number: c.Query("number")}
	for name, dst := range map[string]*time.Time{"from": &f.From, "to": &f.To} {
		if v := c.Query(name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return models.FieldError(name, "must be an RFC 3339 time")
			}
			*dst = t
		}
	}
	list, total, err := m.svc.Recordings(c.UserContext(), f)
	if err != nil {
		return err
	}
	out := make([]recordingOut, len(list))
	for i, r := range list {
		out[i] = m.out(r)
	}
	return sendPage(c, out, total, page)
}

func (m *mediaRoutes) downloadRecording(c *fiber.Ctx) error {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil {
		return models.ErrNotFound
	}
	rec, err := m.svc.RecordingByID(c.UserContext(), tenantOwner(c), id)
	if err != nil {
		return err
	}
	return m.serveFile(c, rec.Path)
}

// nodeFile serves a prompt or hold-music file to an authorised node.
// The node proves itself with the signature the rendered http_cache://
// URL carries (?sig=, see dialplan.MediaURLs) or the /fs/xml credentials.
func (m *mediaRoutes) nodeFile(c *fiber.Ctx) error {
	parts := []string{c.Params("tenant")}
	if class := c.Params("class"); class != "" {
		parts = append(parts, "moh", class)
	}
	file := c.Params("file")
	signed := strings.Join(append(parts, file), "/")
	if err := m.xml.AuthorizeMedia(c.Context().RemoteIP(), c.Get(fiber.HeaderAuthorization), signed, c.Query("sig")); err != nil {
		return nodeRefusal(c, err)
	}
	dir, err := media.Dir(parts[0], parts[1:]...)
	if err != nil || !strings.HasSuffix(file, ".wav") || strings.HasPrefix(file, ".") || strings.ContainsAny(file, "/\\") {
		return models.ErrNotFound
	}
	return m.serveFile(c, path.Join(dir, file))
}

// serveFile answers a library file.
func (m *mediaRoutes) serveFile(c *fiber.Ctx, rel string) error {
	p, err := m.svc.Lib.Path(rel)
	if err != nil {
		return models.ErrNotFound
	}
	return serveAudio(c, p, "audio/wav", models.ErrNotFound)
}

// serveAudio answers the audio file p through net/http's ServeContent,
// which takes Range, If-Range and conditional requests; missing is the
// answer when p is not a regular file.
func serveAudio(c *fiber.Ctx, p, contentType string, missing error) error {
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return missing
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return missing
	}
	fasthttpadaptor.NewFastHTTPHandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		http.ServeContent(w, r, path.Base(p), st.ModTime(), f)
	})(c.Context())
	return nil
}

func (m *mediaRoutes) importCDRs(c *fiber.Ctx) error {
	o := tenantOwner(c)
	mt := strings.TrimSpace(strings.SplitN(c.Get(fiber.HeaderContentType), ";", 2)[0])
	if mt == fiber.MIMEApplicationJSON {
		var in struct {
			Records []media.CDRRecord `json:"records"`
		}
		if err := decodeAction(c, &in); err != nil {
			return err
		}
		sum, err := m.svc.ImportCDRs(c.UserContext(), o, in.Records)
		if err != nil {
			return err
		}
		return c.JSON(sum)
	}
	format := media.FormatCSV
	if mt == "application/x-ndjson" {
		format = media.FormatJSONL
	}
	if len(c.Body()) == 0 {
		return newError(fiber.StatusBadRequest, "empty_body", "send the CSV or JSON Lines file as the body")
	}
	job, err := m.svc.SpoolCDRs(c.UserContext(), o, format, c.Body())
	if err != nil {
		return err
	}
	m.svc.Launch(job.ID)
	c.Location(m.baseURL + "/api/tenants/" + o.Tenant + "/imports/" + strconv.FormatInt(job.ID, 10))
	return c.Status(fiber.StatusAccepted).JSON(job)
}

func (m *mediaRoutes) getJob(c *fiber.Ctx) error {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil {
		return models.ErrNotFound
	}
	job, err := m.svc.JobByID(c.UserContext(), tenantOwner(c), id)
	if err != nil {
		return err
	}
	return c.JSON(job)
}

func (m *mediaRoutes) importMOHFile(c *fiber.Ctx) error {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil {
		return models.ErrNotFound
	}
	raw, err := decodeObject(c)
	if err != nil {
		return err
	}
	var in media.MOHFileImport
	if err := remarshal(raw, &in); err != nil {
		return err
	}
	f, created, err := m.svc.ImportMOHFile(c.UserContext(), tenantOwner(c), id, in)
	if err != nil {
		return mediaError(err)
	}
	body := struct {
		media.MOHFile
		Created bool `json:"created"`
	}{f, created}
	if created {
		return c.Status(fiber.StatusCreated).JSON(body)
	}
	return c.JSON(body)
}

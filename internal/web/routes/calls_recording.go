package routes

import (
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/models"
)

// A live call's recording stays where the record endpoint had FreeSWITCH
// write it: <SWITCHBOARD_RECORDINGS_DIR>/<tenant>/<file> on the node. It is
// not indexed into the recordings report (the spec's rule); a replica that
// sees that directory through SWITCHBOARD_RECORDINGS_MOUNT serves the file
// of a CDR naming it, and nothing else of the mount.

// cdrRecordingRoute declares the download of a CDR's recording, readable
// as the tenant's CDRs and imported recordings are (calls.read).
func (r *callRoutes) cdrRecordingRoute() Route {
	return Route{Method: "GET", Path: "/api/tenants/:tenant/cdrs/:id/recording", Summary: "Download the recording a live call's CDR names (recording_path, as the record endpoint wrote it on the node), read through SWITCHBOARD_RECORDINGS_MOUNT; Range requests answered 206; 404 recording_not_reachable when this server does not see the nodes' recordings directory or the path is outside the tenant's part of it, 404 recording_not_found when the call has no recording or its file is gone", Tag: "reports",
		Auth: AuthAPI, Access: recordingRead, Produces: "audio/wav, audio/mpeg", Ranges: true, Handler: r.cdrRecording}
}

// recordingTypes are the content types of the recordings served, by
// extension (uuid_record picks the format from it).
var recordingTypes = map[string]string{".wav": "audio/wav", ".mp3": "audio/mpeg"}

var (
	errNoRecording           = newError(fiber.StatusNotFound, "recording_not_found", "this call has no recording, or its file is gone")
	errRecordingNotReachable = newError(fiber.StatusNotFound, "recording_not_reachable", "this server does not see the recordings of live calls (SWITCHBOARD_RECORDINGS_MOUNT), or the recording is outside the tenant's recordings directory")
)

// recordingFile maps a CDR's recording_path under the nodes'
// <Recordings>/<tenant>/ to the file under the mount, and answers it with
// its content type. A path elsewhere (another tenant's directory, ".."
// climbing out, an unknown format) is not reachable; a file missing, not
// regular, or whose symlinks lead out of the tenant's directory of the
// mount is not found.
func (r *callRoutes) recordingFile(c models.CDR) (file, contentType string, err error) {
	if c.RecordingPath == "" {
		return "", "", errNoRecording
	}
	if r.RecordingsMount == "" || c.Tenant == "" {
		return "", "", errRecordingNotReachable
	}
	rel, under := strings.CutPrefix(path.Clean(c.RecordingPath), path.Clean(r.Recordings)+"/"+c.Tenant+"/")
	contentType = recordingTypes[strings.ToLower(path.Ext(rel))]
	if !under || contentType == "" {
		return "", "", errRecordingNotReachable
	}
	mount, err := filepath.EvalSymlinks(r.RecordingsMount)
	if err != nil {
		return "", "", errNoRecording
	}
	dir := filepath.Join(mount, c.Tenant) + string(filepath.Separator)
	file, err = filepath.EvalSymlinks(dir + filepath.FromSlash(rel))
	if err != nil || !strings.HasPrefix(file, dir) {
		return "", "", errNoRecording
	}
	return file, contentType, nil
}

func (r *callRoutes) cdrRecording(c *fiber.Ctx) error {
	id, err := strconv.ParseInt(c.Params("id"), 10, 64)
	if err != nil {
		return models.ErrNotFound
	}
	cdr, err := r.Store.CDRByID(c.UserContext(), tenantOwner(c).Tenant, id)
	if err != nil {
		return err
	}
	file, contentType, err := r.recordingFile(cdr)
	if err != nil {
		return err
	}
	return serveAudio(c, file, contentType, errNoRecording)
}

// cdrOut is a CDR as the report shows it: with the URL of its recording
// when this server can play it.
type cdrOut struct {
	models.CDR
	RecordingURL string `json:"recording_url,omitempty"`
}

func (r *callRoutes) cdrsOut(list []models.CDR) []cdrOut {
	out := make([]cdrOut, len(list))
	for i, c := range list {
		out[i].CDR = c
		if _, _, err := r.recordingFile(c); err == nil {
			out[i].RecordingURL = r.BaseURL + "/api/tenants/" + c.Tenant + "/cdrs/" + strconv.FormatInt(c.ID, 10) + "/recording"
		}
	}
	return out
}

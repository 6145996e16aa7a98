package app

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard/switchboard/internal/freeswitch/dialplan"
	"github.com/switchboard/switchboard/internal/media"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/web/routes"
)

// MediaConfig is where uploaded audio goes and how it is converted.
type MediaConfig struct {
	Dir     string // SWITCHBOARD_MEDIA_DIR
	NodeDir string // SWITCHBOARD_MEDIA_NODE_DIR: the same directory as the FreeSWITCH nodes mount it
	NodeURL string // SWITCHBOARD_MEDIA_URL: /fs/media as the nodes reach it (signed http_cache:// URLs)
	// MOHDefaultDir is SWITCHBOARD_MOH_DEFAULT_DIR: the platform's default
	// hold music on the nodes (<dir>/8000, <dir>/16000), streamed as
	// local_stream://moh.
	MOHDefaultDir string
	MaxBytes      int64 // SWITCHBOARD_MEDIA_MAX_BYTES: decoded audio per upload
	// MaxPromptDuration is SWITCHBOARD_MEDIA_MAX_PROMPT_DURATION: the
	// longest voice prompt.
	MaxPromptDuration time.Duration
	// MaxDuration is SWITCHBOARD_MEDIA_MAX_DURATION: the longest recording,
	// voicemail or hold-music file.
	MaxDuration time.Duration
	// MaxStoredBytes is SWITCHBOARD_MEDIA_MAX_STORED_BYTES: the largest
	// converted file.
	MaxStoredBytes int64
	Timeout        time.Duration // SWITCHBOARD_MEDIA_CONVERT_TIMEOUT
	Sox            string        // SWITCHBOARD_SOX
}

var mediaVariables = []envVar{
	{"SWITCHBOARD_MEDIA_DIR", "data/media", "media library: voice prompts, music on hold, imported recordings (<dir>/<tenant>/…)"},
	{"SWITCHBOARD_MEDIA_NODE_DIR", "(the media directory)", "the media library as the FreeSWITCH nodes mount it (local_stream.conf directories)"},
	{"SWITCHBOARD_MEDIA_URL", "(SWITCHBOARD_BASE_URL)/fs/media", "/fs/media as the FreeSWITCH nodes reach it: voice prompts and chimes are played from signed http_cache:// URLs under it (mod_http_cache)"},
	{"SWITCHBOARD_MOH_DEFAULT_DIR", "/usr/share/freeswitch/sounds/music", "the platform's default hold music on the FreeSWITCH nodes (<dir>/8000 and <dir>/16000, as Debian's freeswitch-music-default installs it): local_stream://moh, played by queues, conference rooms, tenants and extensions without a class of their own"},
	{"SWITCHBOARD_MEDIA_MAX_BYTES", "67108864", "largest decoded audio upload or import (413 beyond)"},
	{"SWITCHBOARD_MEDIA_MAX_PROMPT_DURATION", "10m", "longest voice prompt (413 audio_too_long beyond; checked from the upload's header before converting, and the conversion stops there)"},
	{"SWITCHBOARD_MEDIA_MAX_DURATION", "2h", "longest imported recording, voicemail message or music-on-hold file (413 audio_too_long beyond)"},
	{"SWITCHBOARD_MEDIA_MAX_STORED_BYTES", "268435456", "largest converted (WAV) file, whatever the upload's size: a small FLAC of long silence is refused with 413 audio_too_large"},
	{"SWITCHBOARD_MEDIA_CONVERT_TIMEOUT", "60s", "time one sox conversion may take"},
	{"SWITCHBOARD_SOX", "sox", "the sox binary (Debian: sox and libsox-fmt-mp3)"},
}

func init() { Variables = append(Variables, mediaVariables...) }

// loadMediaConfig reads the media variables; baseURL is SWITCHBOARD_BASE_URL.
func loadMediaConfig(get func(name, def string) string, baseURL string) (MediaConfig, error) {
	c := MediaConfig{Dir: get("SWITCHBOARD_MEDIA_DIR", "data/media"), Sox: get("SWITCHBOARD_SOX", "sox")}
	abs, err := filepath.Abs(c.Dir)
	if err != nil {
		return c, fmt.Errorf("SWITCHBOARD_MEDIA_DIR: %v", err)
	}
	c.Dir = abs
	c.NodeDir = strings.TrimRight(get("SWITCHBOARD_MEDIA_NODE_DIR", c.Dir), "/")
	if !strings.HasPrefix(c.NodeDir, "/") {
		return c, fmt.Errorf("SWITCHBOARD_MEDIA_NODE_DIR: must be an absolute path")
	}
	c.NodeURL = strings.TrimRight(get("SWITCHBOARD_MEDIA_URL", baseURL+"/fs/media"), "/")
	if !dialplan.ValidMediaBase(c.NodeURL) {
		return c, fmt.Errorf("SWITCHBOARD_MEDIA_URL: must be an http or https URL of letters, digits and . _ ~ : / - [ ] only")
	}
	c.MOHDefaultDir = strings.TrimRight(get("SWITCHBOARD_MOH_DEFAULT_DIR", "/usr/share/freeswitch/sounds/music"), "/")
	if !dialplan.SafeNodePath(c.MOHDefaultDir) {
		return c, fmt.Errorf("SWITCHBOARD_MOH_DEFAULT_DIR: must be an absolute path of letters, digits, . _ - between slashes")
	}
	n, err := strconv.ParseInt(get("SWITCHBOARD_MEDIA_MAX_BYTES", "67108864"), 10, 64)
	if err != nil || n < 1024 || n > 1<<30 {
		return c, fmt.Errorf("SWITCHBOARD_MEDIA_MAX_BYTES: must be a number of bytes from 1024 to 1073741824")
	}
	c.MaxBytes = n
	for _, d := range []struct {
		name, def string
		dst       *time.Duration
	}{
		{"SWITCHBOARD_MEDIA_MAX_PROMPT_DURATION", "10m", &c.MaxPromptDuration},
		{"SWITCHBOARD_MEDIA_MAX_DURATION", "2h", &c.MaxDuration},
	} {
		if *d.dst, err = time.ParseDuration(get(d.name, d.def)); err != nil || *d.dst < time.Second || *d.dst > 24*time.Hour {
			return c, fmt.Errorf("%s: must be a duration from 1s to 24h, such as %s", d.name, d.def)
		}
	}
	if c.MaxStoredBytes, err = strconv.ParseInt(get("SWITCHBOARD_MEDIA_MAX_STORED_BYTES", "268435456"), 10, 64); err != nil || c.MaxStoredBytes < 1<<16 || c.MaxStoredBytes > 1<<34 {
		return c, fmt.Errorf("SWITCHBOARD_MEDIA_MAX_STORED_BYTES: must be a number of bytes from 65536 to 17179869184")
	}
	if c.Timeout, err = time.ParseDuration(get("SWITCHBOARD_MEDIA_CONVERT_TIMEOUT", "60s")); err != nil || c.Timeout <= 0 {
		return c, fmt.Errorf("SWITCHBOARD_MEDIA_CONVERT_TIMEOUT: must be a duration such as 60s")
	}
	return c, nil
}

// newMediaService wires uploads (voice prompts through the store's audio
// sink), recording imports and reports, and media for FreeSWITCH nodes.
func newMediaService(ctx context.Context, s *services, cfg Config, st *models.Store, log *slog.Logger) *media.Service {
	svc := &media.Service{
		Store: st,
		Log:   log.With("component", "media"),
		Lib: &media.Library{Root: cfg.Media.Dir, MaxBytes: cfg.Media.MaxBytes,
			MaxDuration: cfg.Media.MaxDuration, MaxPromptDuration: cfg.Media.MaxPromptDuration, MaxStoredBytes: cfg.Media.MaxStoredBytes,
			Conv: media.Converter{Sox: cfg.Media.Sox, Timeout: cfg.Media.Timeout}},
	}
	st.SetAudioSink(svc)
	// Files follow their rows: deleted prompts, classes and tenants.
	s.subscribers = append(s.subscribers, svc.FileCleaner())
	// Bulk imports run in the background; jobs of a replica that died are
	// resumed by another once their lease lapses.
	s.stops = append(s.stops, svc.Start(context.WithoutCancel(ctx), replicaID(), 15*time.Second))
	s.routes = append(s.routes, routes.MediaRoutes(svc, s.xml, cfg.BaseURL)...)
	for name, sch := range routes.MediaSchemas() {
		s.schemas[name] = sch
	}
	s.routes = append(s.routes, routes.VoicemailImportRoutes(svc)...)
	for name, sch := range routes.VoicemailImportSchemas() {
		s.schemas[name] = sch
	}
	return svc
}

package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/switchboard/switchboard/internal/media"
	"github.com/switchboard/switchboard/internal/models"
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
	s.web.Media = svc
	return svc
}

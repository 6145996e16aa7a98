package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/changes/outbox"
	"github.com/switchboard/switchboard/internal/comms/chat"
	"github.com/switchboard/switchboard/internal/comms/webhooks"
	"github.com/switchboard/switchboard/internal/freeswitch/fsxml"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/platform/metrics"
	"github.com/switchboard/switchboard/internal/web/routes"
	"github.com/switchboard/switchboard/internal/web/websession"
)

// services are the parts beyond configuration CRUD (FreeSWITCH XML, live
// calls), wired here so routes stays free of construction logic.
type services struct {
	// web is what the route table serves (routes.Services): each new…
	// function below sets its part, and Build hands it to routes.New once.
	web   routes.Services
	ready map[string]func(context.Context) error
	// subscribers act on committed configuration changes; the outbox
	// dispatcher (changes.go) delivers to them.
	subscribers []changes.Subscriber
	outbox      *outbox.Dispatcher
	stops       []func()
	// xml serves /fs/xml.
	xml *fsxml.Service
	// chat is the team-chat sync, a changes.Subscriber.
	chat *chat.Sync
	// chatQueue posts every channel message (routes, webhooks, inbound
	// SMS and WhatsApp).
	chatQueue *chat.Queue
	// webhooks delivers events to outbound webhooks.
	webhooks *webhooks.Service
	// metrics is the process's Prometheus registry (never nil here).
	metrics *metrics.Metrics
	// sessions are administrators' browser sessions.
	sessions *websession.Store
	// keyPrefix starts every Redis key of this installation
	// (models.Store.KeyPrefix).
	keyPrefix string
}

func (s *services) stop() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
}

func newServices(ctx context.Context, cfg Config, st *models.Store, rdb redis.UniversalClient, m *metrics.Metrics, log *slog.Logger) (*services, error) {
	keyPrefix, err := st.KeyPrefix(ctx)
	if err != nil {
		return nil, fmt.Errorf("redis key prefix: %w", err)
	}
	s := &services{ready: map[string]func(context.Context) error{}, metrics: m, keyPrefix: keyPrefix}
	newXMLService(s, cfg, st, rdb, log)
	newMediaService(ctx, s, cfg, st, log)
	newFaxService(ctx, s, cfg, st, log)
	newChatServices(ctx, s, cfg, st, rdb, log) // before messaging: inbound messages post through its queue
	newMessagingService(ctx, s, cfg, st, rdb, log)
	newWebSessions(s, cfg, st, rdb)
	if err := newCallServices(ctx, s, cfg, st, rdb, log); err != nil {
		s.stop()
		return nil, err
	}
	newWebhookService(s, cfg, st, log)
	newCRMServices(s, st, log)
	if err := startOutbox(ctx, s, cfg, st, log); err != nil {
		s.stop()
		return nil, err
	}
	startWebhookWorker(ctx, s)
	return s, nil
}

// newWebSessions keeps administrators' browser sessions in Redis and ends
// them when their administrator's password changes or it is deleted.
func newWebSessions(s *services, cfg Config, st *models.Store, rdb redis.UniversalClient) {
	s.sessions = websession.New(rdb, s.keyPrefix, cfg.SessionIdle, cfg.SessionMax)
	s.subscribers = append(s.subscribers, websession.Revoker{Sessions: s.sessions, Admins: st})
}

// --- FreeSWITCH XML (/fs/xml, routing trace) ---

// newXMLService wires the mod_xml_curl endpoint and the routing trace, and
// makes every committed configuration change raise the XML cache
// generations: at once on the writer, and through the outbox until Redis
// takes it.
func newXMLService(s *services, cfg Config, st *models.Store, rdb redis.UniversalClient, log *slog.Logger) {
	s.xml = fsxml.New(st, rdb, fsxml.Config{
		Domain:        cfg.SIPDomain,
		SIPWSPort:     cfg.SIPWSPort,
		SIPWSSPort:    cfg.SIPWSSPort,
		User:          cfg.XMLCurlUser,
		Password:      cfg.XMLCurlPass,
		Allow:         cfg.XMLCurlAllow,
		MediaDir:      cfg.Media.NodeDir,
		MOHDefaultDir: cfg.Media.MOHDefaultDir,
		MediaURL:      cfg.Media.NodeURL,
		MediaKey:      st.Sealer().Derive("fs-media-url"),
		ModelBytes:    cfg.XMLCacheBytes - cfg.XMLCacheBytes/32,
		DocBytes:      cfg.XMLCacheBytes / 32,
		Preload:       cfg.XMLPreload,
		SnapshotPath:  cfg.XMLSnapshot,
	}, log)
	s.stops = append(s.stops, s.xml.Close)
	s.web.XML = s.xml
	st.OnCommit(s.xml.Committed)
	s.subscribers = append(s.subscribers, s.xml.CacheSubscriber())
}

package app

import (
	"context"
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/chat"
	"github.com/switchboard/switchboard/fsxml"
	"github.com/switchboard/switchboard/models"
	"github.com/switchboard/switchboard/routes"
)

// services are the parts beyond configuration CRUD (FreeSWITCH XML, live
// calls), wired here so routes stays free of construction logic.
type services struct {
	routes  []routes.Route
	schemas map[string]any
	ready   map[string]func(context.Context) error
	changed func(ctx context.Context, tenant string)
	stops   []func()
	// xml serves /fs/xml; its OnDirectoryChange hook is free for the ESL
	// wiring (xml_flush_cache).
	xml *fsxml.Service
	// chat is the team-chat sync, a changes.Subscriber.
	chat *chat.Sync
}

func (s *services) stop() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
}

func newServices(ctx context.Context, cfg Config, st *models.Store, rdb redis.UniversalClient, log *slog.Logger) (*services, error) {
	s := &services{schemas: map[string]any{}, ready: map[string]func(context.Context) error{}}
	s.changed = func(context.Context, string) {}
	newXMLService(s, cfg, st, rdb, log)
	newChatServices(ctx, s, cfg, st, rdb, log)
	if err := newCallServices(ctx, s, cfg, st, rdb, log); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// --- FreeSWITCH XML (/fs/xml, routing trace) ---

// newXMLService wires the mod_xml_curl endpoint and the routing trace, and
// makes every configuration write bump the XML cache generations.
func newXMLService(s *services, cfg Config, st *models.Store, rdb redis.UniversalClient, log *slog.Logger) {
	s.xml = fsxml.New(st, rdb, fsxml.Config{
		Domain:   cfg.SIPDomain,
		User:     cfg.XMLCurlUser,
		Password: cfg.XMLCurlPass,
		Allow:    cfg.XMLCurlAllow,
	}, log)
	s.stops = append(s.stops, s.xml.Close)
	s.routes = append(s.routes, routes.XMLRoutes(st, s.xml)...)
	for name, sch := range routes.XMLSchemas() {
		s.schemas[name] = sch
	}
	prev := s.changed
	s.changed = func(ctx context.Context, tenant string) {
		s.xml.Changed(ctx, tenant)
		prev(ctx, tenant)
	}
}

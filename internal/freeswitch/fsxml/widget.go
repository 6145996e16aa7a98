package fsxml

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/switchboard/switchboard/internal/freeswitch/dialplan"
	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/freeswitch/xmlcurl"
	"github.com/switchboard/switchboard/internal/freeswitch/xmldoc"
	"github.com/switchboard/switchboard/internal/models"
)

// Webrtc click-to-call widgets: the visitor's short-lived directory user
// and the widget's one-extension context (dialplan/widget.go). Both answers
// are rendered on every fetch and never cached: they read the issued user
// (table widget_sip_users, one primary-key read) and the widget row (one
// unique-key read) from the database, so an expiry or a widget change is
// seen by the very next fetch on every replica. Only the tenant's model
// (enabled, name) comes from the model cache, under the tenant's current
// generation.

// widgetFetch answers the fetches that concern a widget: ok is false for
// every other fetch.
func (s *Service) widgetFetch(ctx context.Context, req *xmlcurl.Request, now time.Time) (doc []byte, ok bool, err error) {
	switch req.Section {
	case "directory":
		tenant, isWidget := naming.SplitWidgetUserID(req.User)
		if !isWidget {
			return nil, false, nil
		}
		doc, err := s.widgetDirectory(ctx, req, tenant, now)
		return doc, true, err
	case "dialplan":
		id, isWidget := naming.WidgetPublicID(req.Context())
		if !isWidget {
			return nil, false, nil
		}
		w, snap, err := s.widget(ctx, id, "")
		if err != nil || w == nil {
			return xmldoc.NotFound(), true, err
		}
		doc, _ := dialplan.WidgetDialplan(s.opts, *req, w, snap)
		return doc, true, nil
	}
	return nil, false, nil
}

func (s *Service) widgetDirectory(ctx context.Context, req *xmlcurl.Request, tenant string, now time.Time) ([]byte, error) {
	u, err := s.st.LiveWidgetSIPUser(ctx, req.User, now)
	if errors.Is(err, models.ErrNotFound) || (err == nil && !strings.EqualFold(u.Tenant, tenant)) {
		return xmldoc.NotFound(), nil
	}
	if err != nil {
		return nil, err
	}
	w, snap, err := s.widget(ctx, u.Widget, u.Tenant)
	if err != nil || w == nil {
		return xmldoc.NotFound(), err
	}
	return dialplan.WidgetDirectory(s.opts, *req, w, &dialplan.WidgetUser{ID: u.Username, A1Hash: u.A1Hash, CallerName: u.CallerName}, snap), nil
}

// widget loads the widget with this public id and its tenant's snapshot;
// nil when there is none (or, with tenant set, when it belongs to another
// tenant).
func (s *Service) widget(ctx context.Context, publicID, tenant string) (*dialplan.Widget, *dialplan.TenantSnapshot, error) {
	o, rec, err := s.st.FindPublic(ctx, s.st.Registry().Resource("click_to_call_widgets"), "public_id", publicID)
	if errors.Is(err, models.ErrNotFound) || (err == nil && tenant != "" && !strings.EqualFold(o.Tenant, tenant)) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	src := &source{s: s, g: s.gens.current(o.Tenant), fresh: !s.note.live.Load()}
	m, err := src.tenant(ctx, o.Tenant)
	if err != nil {
		return nil, nil, err
	}
	snap, err := s.snapshot(ctx, m, nil, false, []string{}...)
	if err != nil || snap == nil {
		return nil, nil, err
	}
	w := &dialplan.Widget{
		PublicID:           publicID,
		Enabled:            rec["enabled"] == true,
		WebRTC:             rec["mode"] == "webrtc",
		CallerIDNamePrefix: recString(rec["callerid_name_prefix"]),
	}
	if d, ok := rec["destination"].(map[string]any); ok {
		w.Destination = dialplan.Destination{Type: recString(d["type"]), Target: recString(d["target"])}
	}
	return w, snap, nil
}

func recString(v any) string {
	s, _ := v.(string)
	return s
}

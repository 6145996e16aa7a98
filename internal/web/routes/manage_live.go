package routes

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/freeswitch/gateways/gwstate"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/web/webui"
)

// Live state on the configuration manager's pages: a few platform
// resources have a running counterpart in FreeSWITCH that the registry
// does not hold (a SIP trunk's sofia gateway on each node, a server's
// event-socket connection). pageHooks declares, per resource, what its
// pages add: a list column and tables ("live panels") on the list and the
// object's page. The pages' script (manage_live.js) refreshes what is
// marked live by reading the page again, so the state changes in front of
// the operator without a reload.

// pageHook is one resource's live touches of its pages; any may be nil.
type pageHook struct {
	// listColumn names a column of the list and gives each record's cell.
	listColumn func(s *server, ctx context.Context, recs []models.Record) (string, []string, error)
	// listPanel is a table under the list.
	listPanel func(s *server, ctx context.Context) (*livePanel, error)
	// viewPanel is a table on an object's page.
	viewPanel func(s *server, ctx context.Context, rec models.Record) (*livePanel, error)
}

var pageHooks = map[string]pageHook{
	"sip_trunks": {listColumn: trunkLiveColumn, viewPanel: trunkLivePanel},
	"servers":    {listColumn: serverLiveColumn, listPanel: nodesLivePanel, viewPanel: serverLivePanel},
}

// livePanel is a table of live state.
type livePanel struct {
	// ID names the refreshed element; Heading and Doc introduce it.
	ID, Heading, Doc string
	Columns          []string
	Rows             []liveRow
	// Empty is said when there are no rows.
	Empty string
}

type liveRow struct {
	Head  string
	Cells []liveCell
}

// liveCell is a value; Class marks a state (its colour), Since and
// SinceISO the time it holds since.
type liveCell struct {
	Text, Class     string
	Since, SinceISO string
}

// liveParts is what a manager page carries of its live state.
type liveParts struct {
	// Live is set when the page has live parts (the script is loaded).
	Live   bool
	Panels []livePanel
}

// manageLiveJS is the live parts' script.
var manageLiveJS = webui.ManageLiveJS

func (s *server) manageLiveRoutes() []Route {
	return []Route{
		{Method: "GET", Path: "/static/manage_live.js", Summary: "The configuration manager's live-state script", Tag: "web", Produces: "text/javascript", Handler: func(c *fiber.Ctx) error {
			c.Set(fiber.HeaderContentType, "text/javascript; charset=utf-8")
			c.Set(fiber.HeaderCacheControl, "no-cache")
			return c.Send(manageLiveJS)
		}},
	}
}

// liveList adds the resource's live column and panel to a list page.
func (s *server) liveList(m *manageCtx, recs []models.Record, v *listView) error {
	h, ok := pageHooks[m.res.Name]
	if !ok {
		return nil
	}
	ctx := m.c.UserContext()
	if h.listColumn != nil {
		heading, cells, err := h.listColumn(s, ctx, recs)
		if err != nil {
			return err
		}
		v.Columns = append(v.Columns, heading)
		for i := range v.Rows {
			v.Rows[i].Cells = append(v.Rows[i].Cells, cells[i])
		}
		v.Live = true
	}
	if h.listPanel != nil {
		p, err := h.listPanel(s, ctx)
		if err != nil {
			return err
		}
		v.Panels, v.Live = append(v.Panels, *p), true
	}
	return nil
}

// liveView adds the resource's live panel to an object's page.
func (s *server) liveView(m *manageCtx, rec models.Record) (liveParts, error) {
	h, ok := pageHooks[m.res.Name]
	if !ok || h.viewPanel == nil {
		return liveParts{}, nil
	}
	p, err := h.viewPanel(s, m.c.UserContext(), rec)
	if err != nil {
		return liveParts{}, err
	}
	return liveParts{Live: true, Panels: []livePanel{*p}}, nil
}

// pageTime is a time as the pages show it.
func pageTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// conditionWords say a gateway condition for people.
var conditionWords = map[string]string{
	gwstate.Registered: "registered", gwstate.Failed: "failed", gwstate.Down: "down",
	gwstate.Up: "up (not registering)", gwstate.Trying: "registering", gwstate.Unknown: "unknown (node not connected)",
}

// trunkLiveColumn is each trunk's state on every node, in a line.
func trunkLiveColumn(s *server, ctx context.Context, recs []models.Record) (string, []string, error) {
	names := make([]string, len(recs))
	for i, r := range recs {
		names[i] = str(r["name"])
	}
	states, err := s.gatewayStates().Gateways(ctx, names)
	if err != nil {
		return "", nil, err
	}
	cells := make([]string, len(recs))
	for i, name := range names {
		var parts []string
		for _, st := range states[name] {
			parts = append(parts, fmt.Sprintf("%s: %s since %s", st.Node, conditionWords[st.Condition], pageTime(st.Since)))
		}
		cells[i] = strings.Join(parts, "; ")
		if cells[i] == "" {
			cells[i] = "no node reports it"
		}
	}
	return "Live state", cells, nil
}

// trunkLivePanel is a trunk's gateway on each node.
func trunkLivePanel(s *server, ctx context.Context, rec models.Record) (*livePanel, error) {
	st, err := s.trunkStatusOf(ctx, rec)
	if err != nil {
		return nil, err
	}
	p := &livePanel{ID: "live-gateway", Heading: "Live state", Columns: []string{"Node", "State", "FreeSWITCH", "Last SIP answer"},
		Doc:   "What each FreeSWITCH node says of the sofia gateway " + st.Name + ", as it changes.",
		Empty: "No connected node holds this trunk's gateway."}
	for _, g := range st.Gateways {
		sip := ""
		if g.SIPStatus != 0 {
			sip = strings.TrimSpace(fmt.Sprintf("%d %s", g.SIPStatus, g.SIPPhrase))
		}
		p.Rows = append(p.Rows, liveRow{Head: g.Node, Cells: []liveCell{
			{Text: conditionWords[g.Condition], Class: "state-" + g.Condition, Since: pageTime(g.Since), SinceISO: g.Since.UTC().Format(time.RFC3339)},
			{Text: g.SofiaState + " · ping " + strings.ToLower(g.PingStatus)},
			{Text: sip},
		}})
	}
	return p, nil
}

// nodeConnection says a node's connection for people.
func nodeConnection(n nodeView) liveCell {
	c := liveCell{Text: "not connected", Class: "state-down"}
	if n.Connected {
		c = liveCell{Text: "connected", Class: "state-up"}
	}
	if !n.Since.IsZero() {
		c.Since, c.SinceISO = pageTime(n.Since), n.Since.UTC().Format(time.RFC3339)
	}
	return c
}

// nodes are the FreeSWITCH nodes of this replica; nil when live calls are
// not wired.
func (s *server) nodes(ctx context.Context) ([]nodeView, error) {
	if s.Services.Calls == nil {
		return nil, nil
	}
	return s.Services.Calls.nodeViews(ctx)
}

// serverLiveColumn is each server's event-socket connection.
func serverLiveColumn(s *server, ctx context.Context, recs []models.Record) (string, []string, error) {
	nodes, err := s.nodes(ctx)
	if err != nil {
		return "", nil, err
	}
	cells := make([]string, len(recs))
	for i, r := range recs {
		cells[i] = "not a node of this replica"
		for _, n := range nodes {
			if n.Name == str(r["name"]) {
				c := nodeConnection(n)
				cells[i] = strings.TrimSpace(c.Text + " since " + c.Since)
				if c.Since == "" {
					cells[i] = c.Text
				}
			}
		}
	}
	return "Connection", cells, nil
}

// nodesLivePanel lists every node, servers and SWITCHBOARD_ESL_NODES alike.
func nodesLivePanel(s *server, ctx context.Context) (*livePanel, error) {
	nodes, err := s.nodes(ctx)
	if err != nil {
		return nil, err
	}
	return nodeRows(&livePanel{ID: "live-nodes", Heading: "FreeSWITCH nodes",
		Doc:   "Every node this replica connects to (the enabled servers and SWITCHBOARD_ESL_NODES), as it changes.",
		Empty: "This replica has no FreeSWITCH nodes."}, nodes), nil
}

// serverLivePanel is one server's node.
func serverLivePanel(s *server, ctx context.Context, rec models.Record) (*livePanel, error) {
	nodes, err := s.nodes(ctx)
	if err != nil {
		return nil, err
	}
	var mine []nodeView
	for _, n := range nodes {
		if n.Name == str(rec["name"]) {
			mine = append(mine, n)
		}
	}
	return nodeRows(&livePanel{ID: "live-node", Heading: "Connection", Doc: "This server's event-socket connection, as it changes.",
		Empty: "Not a node of this replica (disabled, or not yet connected)."}, mine), nil
}

func nodeRows(p *livePanel, nodes []nodeView) *livePanel {
	p.Columns = []string{"Node", "Address", "Connection", "Live channels", "Last event", "Events read by"}
	for _, n := range nodes {
		last := ""
		if !n.LastEventAt.IsZero() {
			last = pageTime(n.LastEventAt)
		}
		holder := n.LeaseHolder
		if n.EventsHere {
			holder += " (this replica)"
		}
		p.Rows = append(p.Rows, liveRow{Head: n.Name, Cells: []liveCell{
			{Text: n.Address}, nodeConnection(n), {Text: fmt.Sprint(n.LiveChannels)}, {Text: last}, {Text: strings.TrimSpace(holder)},
		}})
	}
	return p
}

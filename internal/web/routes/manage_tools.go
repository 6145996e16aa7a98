package routes

import (
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/switchboard/switchboard/internal/models"
)

// The configuration manager's tools (issue 26 item 5): the routing trace,
// the call and recording reports, import jobs and webhooks' delivery logs.
// Each page is a server-rendered frame whose script (/assets/tools.js)
// calls the API route the tool is about, with the session, and shows its
// answer; so the rules are the API's. A page declares the access of the
// API route it reads, and offers a write (replay, enable, an import) only
// when the principal passes that route's declared access (permits).

// toolRoutes are the tools' pages. They come before the resource pages in
// the route table: /tenants/:tenant/:resource/:key would take
// /tenants/acme/tools/trace for an object's page.
func (s *server) toolRoutes() []Route {
	page := func(path, summary string, a Access, h fiber.Handler) Route {
		return Route{Method: "GET", Path: path, Summary: summary, Tag: "web", Auth: AuthPage, Access: a, Produces: fiber.MIMETextHTML,
			HTMLAnswers: managePageAnswers, Handler: h}
	}
	var routes []Route
	for _, t := range tools {
		h := s.toolTrace
		switch t.Path {
		case "tools/" + reportCDRs, "tools/" + reportRecordings:
			h = s.toolReport(strings.TrimPrefix(t.Path, "tools/"))
		case "tools/imports":
			h = s.toolImports
		}
		path := "/tenants/:tenant/" + t.Path
		if t.Platform {
			path = "/manage/" + t.Path
		}
		routes = append(routes, page(path, t.Summary, t.Access, h))
	}
	for _, k := range webhookKinds {
		routes = append(routes, page(deliveryPage(k), "A webhook's delivery log with replay", k.read, s.toolDeliveries(k)))
	}
	return routes
}

// deliveryPage is the delivery log page of a webhook kind: its object
// page's path and /deliveries.
func deliveryPage(k webhookKind) string {
	p := strings.TrimPrefix(k.base, "/api")
	if k.read.Scope != ScopeTenant {
		p = "/manage" + p
	}
	return p + "/deliveries"
}

// tool is one tool's page: its route and its link in the menus.
type tool struct {
	Label, Path, Summary string
	// Access is the page's: the access of the API route it reads, or of
	// the write it is for (imports).
	Access Access
	// Platform tools live under /manage/, the others in a tenant.
	Platform bool
}

var tools = []tool{
	{"Routing trace", "tools/trace", "The routing trace page: where a call from a number to a dialled number goes, step by step", traceTenantAccess, false},
	{"Call records", "tools/" + reportCDRs, "The tenant's call detail records with the report's filters", Access{Perm: callsRead.Perm, Scope: ScopeTenant}, false},
	{"Call recordings", "tools/" + reportRecordings, "The tenant's call recordings with the report's filters and a player", recordingRead, false},
	{"Imports", "tools/imports", "Start imports (call records, recordings, voicemail) and watch an import job's progress", importAccess, false},
	{"Routing trace", "tools/trace", "The platform routing trace page: where a call to a DID goes", tracePlatformAccess, true},
}

// toolLinks are the tools the principal may open where m is.
func toolLinks(m *manageCtx) []navLink {
	var out []navLink
	for _, t := range tools {
		if t.Platform != (m.tenant == "") || !m.p.permits(t.Access, m.tenant) {
			continue
		}
		u := "/manage/" + t.Path
		if !t.Platform {
			u = "/tenants/" + url.PathEscape(m.tenant) + "/" + t.Path
		}
		out = append(out, navLink{Label: t.Label, URL: u, Current: m.c.Path() == u})
	}
	return out
}

// objectTools are the tools of one object's page: a webhook's delivery
// log (a webhook kind is the name of its resource).
func objectTools(m *manageCtx, rec models.Record) []navLink {
	for _, k := range webhookKinds {
		if k.kind == m.res.Name && m.p.permits(k.read, m.tenant) {
			return []navLink{{Label: "Delivery log", URL: m.objectPage(rec) + "/deliveries"}}
		}
	}
	return nil
}

// toolInput is one input of a tool's form; its name is the API's query
// parameter.
type toolInput struct {
	// ID is the input's element id (inputs sets it).
	ID, Name, Label, Help, Type, Value string
	Required                           bool
	// Options are suggestions (a datalist).
	Options []string
}

// toolView is what the tools' templates read.
type toolView struct {
	managePage
	Heading, Intro string
	// API is the route the page's script calls; Page this page's path.
	API, Page string
	Inputs    []toolInput
	// Kind tells the script how to show the answer.
	Kind string
	// Other links the tool's sibling pages (the reports).
	Other []navLink
	// Write is the write the page may offer (replay, enable, import
	// start): its API path, or "" when the principal may not.
	Write string
	// Hook is the webhook a delivery log is of.
	Hook *hookView
	// Imports are the import kinds offered.
	Imports []importKind
	// Job is the import job the page watches (?job=).
	Job string
	// Recordings is the recordings report a call record links to.
	Recordings string
}

func (s *server) toolFrame(c *fiber.Ctx, title string, crumbs ...crumb) (*manageCtx, managePage, error) {
	m := &manageCtx{c: c, p: principal(c), owner: tenantOwner(c), tenant: tenantOwner(c).Tenant}
	mp, err := s.frame(m, title, s.tenantCrumbs(m, crumbs...)...)
	return m, mp, err
}

// inputs gives a form's inputs their element ids (prefix and name) and
// their default type.
func inputs(prefix string, in []toolInput) []toolInput {
	for i := range in {
		in[i].ID = prefix + in[i].Name
		if in[i].Type == "" {
			in[i].Type = "text"
		}
	}
	return in
}

// queryInputs fills inputs from the page's query (a reload or a shared
// link shows the same answer).
func queryInputs(c *fiber.Ctx, in []toolInput) []toolInput {
	for i := range in {
		in[i].Value = c.Query(in[i].Name)
	}
	return inputs("in-", in)
}

func (s *server) toolTrace(c *fiber.Ctx) error {
	m, mp, err := s.toolFrame(c, "Routing trace", crumb{"Routing trace", ""})
	if err != nil {
		return err
	}
	v := toolView{managePage: mp, Heading: "Routing trace", Kind: "trace", Page: c.Path()}
	at := toolInput{Name: "at", Label: "At (optional)", Type: "datetime-local", Help: "when the call happens, in this browser's time zone: schedules and office mode decide by it; empty is now"}
	from := toolInput{Name: "from", Label: "From (optional)", Help: "the caller: an extension of the tenant or a number, e.g. 0825550001"}
	if m.tenant == "" {
		v.Intro = "What happens when a call from outside reaches one of the platform's DIDs: the tenant, route and destination it takes, with the dialplan XML FreeSWITCH receives."
		v.API = "/api/routing/trace"
		v.Inputs = []toolInput{{Name: "did", Label: "DID", Required: true, Help: "the number called, as the trunk delivers it"}, from, at}
	} else {
		v.Intro = "What happens when an extension or a number calls a number in this tenant: the route, condition, schedule and destination that decide the call, with the dialplan XML FreeSWITCH receives."
		v.API = "/api/tenants/" + url.PathEscape(m.tenant) + "/routing/trace"
		v.Inputs = []toolInput{from, {Name: "to", Label: "To", Required: true, Help: "the dialled number: an extension, a feature code or an outside number, e.g. 1001"}, at}
	}
	v.Inputs = queryInputs(c, v.Inputs)
	return render(c, fiber.StatusOK, "tools_trace.html", v)
}

// Report kinds.
const (
	reportCDRs       = "cdrs"
	reportRecordings = "recordings"
)

// reportInputs are a report's filters: its API's declared query but the
// tenant (the page's) and paging (the page's buttons).
func reportInputs(query []string) []toolInput {
	help := map[string]toolInput{
		"from":      {Label: "From", Type: "datetime-local", Help: "calls started at or after"},
		"to":        {Label: "To", Type: "datetime-local", Help: "calls started before"},
		"direction": {Label: "Direction", Options: []string{"inbound", "outbound", "internal"}},
		"extension": {Label: "Extension", Help: "the tenant's extension on the call"},
		"number":    {Label: "Number", Help: "the caller's or the dialled number"},
	}
	var out []toolInput
	for _, q := range query {
		switch q {
		case "tenant", "limit", "offset":
			continue
		}
		in := help[q]
		in.Name = q
		if in.Label == "" {
			in.Label = label(q)
		}
		out = append(out, in)
	}
	return out
}

func (s *server) toolReport(kind string) fiber.Handler {
	return func(c *fiber.Ctx) error {
		heading, intro, query := "Call records", "Every call of the tenant, newest first; a recorded call plays in its row when this server reaches the nodes' recordings.", cdrReportQuery
		if kind == reportRecordings {
			heading, intro, query = "Call recordings", "The tenant's indexed call recordings (imported ones), newest first, each with a player.", recordingsQuery
		}
		m, mp, err := s.toolFrame(c, heading, crumb{heading, ""})
		if err != nil {
			return err
		}
		api := "/api/reports/" + kind + "?tenant=" + url.QueryEscape(m.tenant)
		v := toolView{managePage: mp, Heading: heading, Intro: intro, Kind: kind, API: api, Page: c.Path(), Inputs: queryInputs(c, reportInputs(query))}
		// The other report is linked beside it (and a call record to its
		// recordings) when the principal may read it.
		for _, t := range tools {
			other := t.Path == "tools/"+reportCDRs || t.Path == "tools/"+reportRecordings
			if !other || t.Platform || t.Path == "tools/"+kind || !m.p.permits(t.Access, m.tenant) {
				continue
			}
			v.Other = append(v.Other, navLink{Label: t.Label, URL: "/tenants/" + url.PathEscape(m.tenant) + "/" + t.Path})
			if t.Path == "tools/"+reportRecordings {
				v.Recordings = v.Other[len(v.Other)-1].URL
			}
		}
		return render(c, fiber.StatusOK, "tools_report.html", v)
	}
}

// hookView is the webhook a delivery log page is about.
type hookView struct {
	Name, URL, Page string
	Enabled         bool
	DisabledReason  string
	// Enable and Test are the API routes of those actions.
	Enable, Test string
}

func (s *server) toolDeliveries(k webhookKind) fiber.Handler {
	return func(c *fiber.Ctx) error {
		m := &manageCtx{c: c, p: principal(c), owner: tenantOwner(c), tenant: tenantOwner(c).Tenant, res: resourceNamed(k.kind)}
		rec, err := s.Store.Get(c.UserContext(), m.res, m.owner, c.Params("id"))
		if err != nil {
			return err
		}
		name := objectLabel(m.res, rec)
		mp, err := s.frame(m, "Delivery log of "+name, s.tenantCrumbs(m, crumb{plural(m.res), m.base()}, crumb{name, m.objectPage(rec)}, crumb{"Delivery log", ""})...)
		if err != nil {
			return err
		}
		api := apiCollection(m.res, m.tenant) + url.PathEscape(c.Params("id"))
		enabled, _ := rec["enabled"].(bool)
		v := toolView{managePage: mp, Heading: "Delivery log of " + name, Kind: "deliveries", API: api + "/deliveries", Page: c.Path(),
			Hook: &hookView{Name: name, URL: str(rec["url"]), Page: m.objectPage(rec), Enabled: enabled, DisabledReason: str(rec["disabled_reason"])}}
		if m.p.permits(k.write, m.tenant) {
			v.Write = api
			v.Hook.Enable, v.Hook.Test = api+"/enable", api+"/test"
		}
		return render(c, fiber.StatusOK, "tools_deliveries.html", v)
	}
}

// importKind is one import the imports page offers: its API route and the
// form's inputs (named as the API's fields; the file becomes the body or
// audio_base64).
type importKind struct {
	ID, Heading, Help, API string
	// Body is how the file is sent: "file" (the body itself, a job) or
	// "audio" (JSON with audio_base64 and the inputs).
	Body   string
	Accept string
	Inputs []toolInput
}

func (s *server) toolImports(c *fiber.Ctx) error {
	m, mp, err := s.toolFrame(c, "Imports", crumb{"Imports", ""})
	if err != nil {
		return err
	}
	base := "/api/tenants/" + url.PathEscape(m.tenant) + "/"
	v := toolView{managePage: mp, Heading: "Imports", Kind: "imports", Page: c.Path(), Job: c.Query("job"), API: base + "imports/"}
	v.Intro = "Bring call records, recordings and voicemail from another system. A call record file runs as a job: its progress is shown here as it goes."
	audio := ".wav,.mp3,.ogg,.flac,audio/*"
	v.Imports = []importKind{
		{ID: "cdrs", Heading: "Call records", API: base + "imports/cdrs", Body: "file", Accept: ".csv,.jsonl,.ndjson,text/csv,application/x-ndjson",
			Help: "A CSV file with a header row, or JSON Lines: external_id, start, duration, src, dst, direction and disposition on every row (answer, end, billsec, caller_id_name, extension optional)."},
		{ID: "recording", Heading: "A call recording", API: base + "recordedcalls", Body: "audio", Accept: audio,
			Help: "A WAV, MP3, OGG or FLAC file of one call; the same external id again is not imported twice.",
			Inputs: []toolInput{
				{Name: "external_id", Label: "External id", Required: true, Help: "the call's id in the system it comes from"},
				{Name: "when", Label: "When", Required: true, Type: "datetime-local", Help: "when the call started, in this browser's time zone"},
				{Name: "src", Label: "From", Required: true, Help: "the caller's number or extension"},
				{Name: "dst", Label: "To", Required: true, Help: "the dialled number or extension"},
				{Name: "duration", Label: "Duration (seconds)", Required: true, Type: "number"},
				{Name: "type", Type: "hidden", Value: "extension"},
			}},
		{ID: "voicemail", Heading: "A voicemail message", API: base + "imports/voicemail", Body: "audio", Accept: audio,
			Help: "A WAV, MP3, OGG or FLAC message, filed in a mailbox of the tenant.",
			Inputs: []toolInput{
				{Name: "external_id", Label: "External id", Required: true, Help: "the message's id in the system it comes from"},
				{Name: "mailbox", Label: "Mailbox", Required: true, Help: "an extension or special mailbox of the tenant"},
				{Name: "folder", Label: "Folder", Options: []string{"inbox", "old", "saved"}, Help: "default inbox"},
				{Name: "caller_id_number", Label: "Caller's number"},
			}},
	}
	for i, k := range v.Imports {
		v.Imports[i].Inputs = inputs("imp-"+k.ID+"-", k.Inputs)
	}
	return render(c, fiber.StatusOK, "tools_imports.html", v)
}

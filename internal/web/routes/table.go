package routes

import (
	"github.com/switchboard/switchboard/internal/comms/fax"
	"github.com/switchboard/switchboard/internal/comms/messaging"
	"github.com/switchboard/switchboard/internal/comms/webhooks"
	"github.com/switchboard/switchboard/internal/freeswitch/fsxml"
	"github.com/switchboard/switchboard/internal/media"
	"github.com/switchboard/switchboard/internal/models"
)

// Services are the parts app wires beyond the store and Redis. The route
// table serves the routes of each one that is set (the benchmark's bare
// app sets none).
type Services struct {
	// XML serves /fs/xml and the routing trace; the media and fax routes
	// authorise FreeSWITCH nodes through it.
	XML   *fsxml.Service
	Media *media.Service
	Fax   *fax.Service
	// FaxMaxBytes is the largest fax a node may upload (413 beyond).
	FaxMaxBytes int
	Messaging   *messaging.Service
	Chat        *ChatDeps
	Calls       *CallDeps
	Webhooks    *webhooks.Service
}

// routeTable is every route the server serves, in the order they are
// registered: Fiber tries them in this order, and the OpenAPI document
// (the last group) is built from the same list. It also answers the
// OpenAPI shapes the hand-written groups name. Each group's routes are
// declared beside their handlers, in the file named; this is the one list
// of them, read top to bottom.
func (s *server) routeTable(doc **openAPIDoc) ([]Route, map[string]any) {
	t := &table{schemas: map[string]any{}}
	sv := s.Services

	// Health, API keys and the administrator's authenticator (keys.go, mfa.go).
	t.add([]Route{
		{Method: "GET", Path: "/healthz", Summary: "Liveness", Tag: "operations", Response: "Health", Handler: s.healthz},
		{Method: "GET", Path: "/readyz", Summary: "Readiness for both the API and the FreeSWITCH XML path (503 while draining or when either cannot work)", Tag: "operations", Response: "Health", Answers: map[int]string{503: "Health"}, Handler: s.readyz},
		{Method: "GET", Path: "/readyz/api", Summary: "Readiness of the configuration API: the database answers (Redis is reported, not required)", Tag: "operations", Response: "Health", Answers: map[int]string{503: "Health"}, Handler: s.readyzAPI},
		{Method: "GET", Path: "/readyz/xml", Summary: "Readiness of the FreeSWITCH XML path: the database answers or models are held in memory", Tag: "operations", Response: "Health", Answers: map[int]string{503: "Health"}, Handler: s.readyzXML},
		{Method: "POST", Path: "/api/key/", Summary: "Create an API key (its value is shown only in this response)", Tag: "keys", Auth: AuthAPI, Access: keysAccess, Request: "APIKeyCreate", Response: "APIKeyCreated", Status: 201, Handler: s.createKey},
		{Method: "GET", Path: "/api/key/", Summary: "List API keys (without their values)", Tag: "keys", Auth: AuthAPI, Access: keysAccess, Response: "APIKeyList", Query: []string{"limit", "offset"}, Handler: s.listKeys},
		{Method: "POST", Path: "/api/mfa", Summary: "Enrol a TOTP authenticator for the calling administrator (secret shown only in this response); from then on Basic requests need X-TOTP", Tag: "administrators", Auth: AuthAPI, Access: Access{Scope: ScopeSelf}, Request: "NoFields", Response: "MFAEnrolment", Status: 201, Handler: s.enrolMFA},
		{Method: "DELETE", Path: "/api/key/:id", Summary: "Revoke an API key", Tag: "keys", Auth: AuthAPI, Access: keysAccess, Status: 204, Handler: s.revokeKey},
	})

	// The configuration API: list, get, create, update and delete of every
	// resource of the registry, generated from it (resources.go).
	for _, res := range models.Resources {
		if !res.Custom() {
			t.add(s.crudRoutes(res))
		}
	}
	// A SIP trunk's live gateway state (trunk_status.go).
	t.add(s.trunkStatusRoutes(), trunkStatusSchemas())

	// Browser sign-in, the session and the menu (web.go); the API
	// reference and live-calls dashboard pages (webui.go).
	t.add(s.webRoutes())
	t.add(s.webUIRoutes())

	// The configuration manager's tools (manage_tools.go), before its
	// pages of every resource (manage.go), whose paths would take theirs.
	t.add(s.toolRoutes())
	t.add(s.manageRoutes())
	t.add(s.manageLiveRoutes())
	t.add(touchRoutes())

	// Call-centre agents' status (agents.go).
	t.add(s.agentRoutes())

	// Phone provisioning (provision.go).
	t.add(s.provisionRoutes())

	// FreeSWITCH XML: mod_xml_curl's fetch and the routing trace (xmlcurl.go).
	if sv.XML != nil {
		t.add(xmlCurlRoutes(s.Store, sv.XML, s.Metrics), xmlCurlSchemas())
	}

	// Media: recording, CDR and hold-music imports, reports, files for the
	// nodes (media.go); voicemail imports (voicemail_import.go).
	if sv.Media != nil {
		t.add(mediaLibraryRoutes(sv.Media, sv.XML, s.BaseURL), mediaSchemas())
		t.add(voicemailImportRoutes(sv.Media), voicemailImportSchemas())
	}

	// Received faxes from the nodes (fax.go).
	if sv.Fax != nil {
		t.add(faxUploadRoutes(sv.Fax, sv.XML, sv.FaxMaxBytes), faxSchemas())
	}

	// Messaging: SMS and WhatsApp sends, reads and provider callbacks
	// (messaging.go).
	if sv.Messaging != nil {
		t.add(messagingAPIRoutes(sv.Messaging, s.Store, s.Redis, s.KeyPrefix, s.BaseURL), messagingSchemas())
	}

	// Team chat: posts and AI agents (chat.go), Slack-compatible incoming
	// webhooks (webhooks.go), the web client (chat_web.go).
	if sv.Chat != nil {
		t.add(chatAPIRoutes(*sv.Chat), chatSchemas())
		t.add(incomingWebhookRoutes(*sv.Chat))
		t.add(chatWebClientRoutes(*sv.Chat))
	}

	// Live calls: click-to-call widgets (widgets.go), channels, call
	// actions, the event stream, nodes and CDRs (calls*.go).
	if sv.Calls != nil {
		t.add(callAPIRoutes(*sv.Calls), callSchemas())
	}

	// Outbound webhooks' deliveries, replays and tests (outbound_webhooks.go).
	if sv.Webhooks != nil {
		t.add(webhookDeliveryRoutes(s.Store, sv.Webhooks), webhookDeliverySchemas())
	}

	// Routes from outside the table (the benchmark's reference route).
	t.add(s.Extra)

	// Operations: /metrics and pprof (ops.go).
	t.add(s.opsRoutes())

	// This OpenAPI document, built from every route above (router.go).
	t.add(docRoutes(doc))
	return t.routes, t.schemas
}

// table collects the route table's groups in order.
type table struct {
	routes  []Route
	schemas map[string]any
}

// add appends a group's routes and the shapes they name.
func (t *table) add(routes []Route, schemas ...map[string]any) {
	t.routes = append(t.routes, routes...)
	for _, part := range schemas {
		for name, sch := range part {
			if _, dup := t.schemas[name]; dup {
				panic("routes: two groups declare the schema " + name) // a programming error caught at start
			}
			t.schemas[name] = sch
		}
	}
}

var keysAccess = Access{Perm: "keys.manage", Scope: ScopeKeys}

package routes

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/freeswitch/calls"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/platform/keyprefix"
	"github.com/switchboard/switchboard/internal/platform/metrics"
	"github.com/switchboard/switchboard/internal/web/captcha"
)

// CallDeps is what the live-call routes need from the wiring in app.
type CallDeps struct {
	Store *models.Store
	Redis redis.UniversalClient
	// KeyPrefix starts every Redis key (models.Store.KeyPrefix).
	KeyPrefix string
	// Control acts on live calls (the only way to the nodes).
	Control *calls.Control
	Tracker *calls.Tracker
	// Recordings is the directory on the FreeSWITCH nodes where the record
	// endpoint writes (<Recordings>/<tenant>/<file>.wav).
	Recordings string
	// RecordingsMount is where this replica sees Recordings ("" = it does
	// not): CDRs' recordings are served from there (calls_recording.go).
	RecordingsMount string
	// BaseURL starts the URLs the answers carry (SWITCHBOARD_BASE_URL).
	BaseURL string
	// UserVars returns the directory variables of a tenant's extension
	// (fsxml.Service.UserVariables): a callback's first leg carries them.
	UserVars func(ctx context.Context, tenant, ext string) ([][2]string, error)
	// Streams ends every open event stream when it is done (shutdown).
	Streams context.Context
	// Heartbeat is the interval of SSE comment lines (default 15s).
	Heartbeat time.Duration
	// SessionCheck is how often an event stream opened with a browser
	// session checks that the session is still signed in (default 400ms:
	// the stream ends within a second of a sign-out, revocation or expiry).
	SessionCheck time.Duration
	// LeaseHolder returns the replica holding a node's event lease ("" when
	// none), for the node list.
	LeaseHolder func(ctx context.Context, node string) (string, error)
	// StreamsPerKey caps the event streams one API key (or administrator)
	// holds open on a replica (default 10; more answer 429).
	StreamsPerKey int
	// Metrics counts open event streams (nil: not counted).
	Metrics *metrics.Metrics
	// Captcha verifies widget visitors' captcha tokens (nil: none
	// configured; widgets that require one answer 501).
	Captcha *captcha.Verifier
	// SIPDomain and SIPWSURL are the SIP domain and SIP-over-WebSocket URL
	// a webrtc widget's visitor registers with (SWITCHBOARD_SIP_DOMAIN,
	// SWITCHBOARD_SIP_WS_URL).
	SIPDomain, SIPWSURL string
}

// callRoutes serves live channels, call actions, the event stream and CDRs.
type callRoutes struct {
	CallDeps
	idem    *idempotency
	streams *streamLimiter
	limit   *limiter // the widgets' per-address limits
}

// callAPIRoutes declares the telephony endpoints.
func callAPIRoutes(d CallDeps) []Route {
	if d.Heartbeat <= 0 {
		d.Heartbeat = 15 * time.Second
	}
	if d.SessionCheck <= 0 {
		d.SessionCheck = 400 * time.Millisecond
	}
	if d.Streams == nil {
		d.Streams = context.Background()
	}
	if d.StreamsPerKey <= 0 {
		d.StreamsPerKey = 10
	}
	d.KeyPrefix = keyprefix.OrDefault(d.KeyPrefix)
	r := &callRoutes{CallDeps: d, idem: &idempotency{rdb: d.Redis, prefix: d.KeyPrefix, ttl: 24 * time.Hour},
		streams: &streamLimiter{max: d.StreamsPerKey, open: map[string]int{}}, limit: newLimiter(d.Redis, d.KeyPrefix, Limits{})}
	return append(r.widgetRoutes(), []Route{
		{Method: "GET", Path: "/api/telephony/channels", Summary: "List live channels (tenant keys: their tenant; platform: all or ?tenant=)", Tag: "telephony", Auth: AuthAPI, Access: callsRead, Response: "ChannelList", Query: []string{"tenant", "limit", "offset"}, Handler: r.listChannels},
		{Method: "GET", Path: "/api/telephony/channels/*", Wildcard: "id", Summary: "One live or recently ended channel; the id (e.g. SIP/1001-acme-0000002a) may be URL-encoded or raw", Tag: "telephony", Auth: AuthAPI, Access: Access{Perm: "calls.read", Scope: ScopeCalls, User: UserOwnCalls}, Response: "Channel", Handler: r.getChannel},
		{Method: "GET", Path: "/api/telephony/events", Summary: "Server-Sent Events of channel and call changes: id: on every event, resume with Last-Event-ID (or last_event_id) within an hour, heartbeat comments every 15 s; 429 beyond 10 open streams per API key", Tag: "telephony", Auth: AuthAPI, Access: callsRead, Query: []string{"tenant", "last_event_id"}, Produces: "text/event-stream", Handler: r.events},
		{Method: "GET", Path: "/api/reports/cdrs", Summary: "Call detail records, newest first; from/to (RFC 3339) bound started_at, direction and extension match exactly, number is the caller's or the dialled number; recording_url when this server can play the call's recording", Tag: "reports", Auth: AuthAPI, Access: callsRead, Response: "CDRList", Query: cdrReportQuery, Handler: r.listCDRs},
		r.cdrRecordingRoute(),
		{Method: "POST", Path: "/api/telephony/call", Summary: "Place a callback call: ring the caller's mobile, then dial to and bridge; 202 with Location of the call resource (Idempotency-Key honoured)", Tag: "telephony", Auth: AuthKeyOnly, Access: callsControl, Request: "CallRequest", Response: "CallPlaced", Status: 202, Idempotent: true, Handler: r.idem.wrap(r.placeCall)},
		{Method: "GET", Path: "/api/telephony/nodes", Summary: "FreeSWITCH nodes (platform only): connected, event lease holder, Core-UUID, last event, live channels", Tag: "telephony", Auth: AuthAPI, Access: Access{Perm: "calls.read", Scope: ScopePlatform}, Response: "NodeList", Handler: r.listNodes},
		{Method: "GET", Path: "/api/telephony/calls/:id", Summary: "A callback call placed with POST /api/telephony/call: its state, failed leg and FreeSWITCH cause, both legs' channels, timestamps (kept 24 hours)", Tag: "telephony", Auth: AuthAPI, Access: Access{Perm: "calls.read", Scope: ScopeCalls, User: UserOwnCalls}, Response: "Call", Handler: r.getCall},
		{Method: "POST", Path: "/api/telephony/hangup", Summary: "Hang a channel up", Tag: "telephony", Auth: AuthKeyOrSession, Access: callsControl, Request: "ChannelAction", Response: "ActionDone", Idempotent: true, Handler: r.idem.wrap(r.hangup)},
		{Method: "POST", Path: "/api/telephony/transfer", Summary: "Blind-transfer a channel to an extension or number in its tenant", Tag: "telephony", Auth: AuthKeyOrSession, Access: callsControl, Request: "TransferRequest", Response: "ActionDone", Idempotent: true, Handler: r.idem.wrap(r.transfer)},
		{Method: "POST", Path: "/api/telephony/record", Summary: "Start or stop recording a channel into the recordings directory", Tag: "telephony", Auth: AuthKeyOrSession, Access: callsControl, Request: "RecordRequest", Response: "ActionDone", Idempotent: true, Handler: r.idem.wrap(r.record)},
	}...)
}

// Access of the telephony routes: reads across a tenant are narrowed by
// ?tenant=; actions and single channels are checked against the channel.
var (
	callsRead    = Access{Perm: "calls.read", Scope: ScopeQueryTenant}
	callsControl = Access{Perm: "calls.control", Scope: ScopeCalls, User: UserOwnCalls}
	// cdrReportQuery is the CDR report's query (its page offers the same
	// filters).
	cdrReportQuery = []string{"tenant", "from", "to", "direction", "extension", "number", "limit", "offset"}
)

// scopedPage resolves the tenant a read is limited to and its page.
func scopedPage(c *fiber.Ctx) (string, models.Page, error) {
	tenant := queryTenant(c)
	page, err := pageParams(c)
	return tenant, page, err
}

func (r *callRoutes) listChannels(c *fiber.Ctx) error {
	tenant, page, err := scopedPage(c)
	if err != nil {
		return err
	}
	list, total, err := r.Tracker.List(c.UserContext(), tenant, page.Limit, page.Offset)
	if err != nil {
		return err
	}
	if list == nil {
		list = []calls.Channel{}
	}
	return sendPage(c, list, total, page)
}

// channelParam reads the channel id of /api/telephony/channels/*, given
// URL-encoded (SIP%2F1001-acme-0000002a) or as raw path segments.
func channelParam(c *fiber.Ctx) string {
	raw := strings.Clone(c.Params("*"))
	if v, err := url.PathUnescape(raw); err == nil {
		return v
	}
	return raw
}

func (r *callRoutes) getChannel(c *fiber.Ctx) error {
	ch, err := r.channel(c.UserContext(), principal(c), channelParam(c), false)
	if err != nil {
		return err
	}
	return c.JSON(ch)
}

var errChannelNotFound = newError(fiber.StatusNotFound, "channel_not_found", "no live channel has this id")

// channel loads a channel the principal may see. Ended channels are 404
// when live is set (actions), readable otherwise.
func (r *callRoutes) channel(ctx context.Context, p *Principal, id string, live bool) (calls.Channel, error) {
	if _, _, _, _, err := calls.ParseID(id); err != nil {
		if live {
			return calls.Channel{}, models.FieldError("channel", "must look like SIP/1001-acme-0000002a")
		}
		return calls.Channel{}, errChannelNotFound
	}
	ch, err := r.Tracker.Get(ctx, id)
	if errors.Is(err, calls.ErrNotFound) {
		return ch, errChannelNotFound
	}
	if err != nil {
		return ch, err
	}
	if !p.mayChannel(ch.Tenant, ch.Extension) {
		return ch, newError(fiber.StatusForbidden, "forbidden", "this channel belongs to another tenant or extension")
	}
	if live && ch.State == calls.StateHangup {
		return ch, newError(fiber.StatusNotFound, "channel_ended", "this channel has ended")
	}
	return ch, nil
}

func (r *callRoutes) listCDRs(c *fiber.Ctx) error {
	tenant, page, err := scopedPage(c)
	if err != nil {
		return err
	}
	f := models.CDRFilter{Tenant: tenant, AllTenants: tenant == "", Page: page,
		Direction: c.Query("direction"), Extension: c.Query("extension"), Number: c.Query("number")}
	for name, dst := range map[string]*time.Time{"from": &f.From, "to": &f.To} {
		if v := c.Query(name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return models.FieldError(name, "must be an RFC 3339 time")
			}
			*dst = t
		}
	}
	list, total, err := r.Store.CDRs(c.UserContext(), f)
	if err != nil {
		return err
	}
	return sendPage(c, r.cdrsOut(list), total, page)
}

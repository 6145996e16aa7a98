package routes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/comms/chat"
	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/platform/keyprefix"
)

// ChatDeps is what the team-chat routes need from the wiring in app.
type ChatDeps struct {
	Store *models.Store
	Redis redis.UniversalClient
	// KeyPrefix starts every Redis key (models.Store.KeyPrefix).
	KeyPrefix string
	// Chat is the chat server's client; with no chat server configured
	// every endpoint that needs it answers 503 chat_unavailable.
	Chat *chat.Client
	// Queue takes channel messages (API and incoming webhooks): committed
	// before the answer, posted to the chat server right after.
	Queue *chat.Queue
	// Sync is told about chat accounts so room memberships follow them.
	Sync      *chat.Sync
	BaseURL   string
	SIPDomain string
	// SIPWSURL is the SIP-over-WebSocket URL of the provisioning bundle.
	SIPWSURL string
	// Name is the installation's name, the web client's title where a
	// tenant's branding names no product.
	Name string
}

type chatRoutes struct{ ChatDeps }

// newChatRoutes fills in what d leaves to defaults.
func newChatRoutes(d ChatDeps) *chatRoutes {
	d.KeyPrefix = keyprefix.OrDefault(d.KeyPrefix)
	return &chatRoutes{d}
}

// chatAPIRoutes declares the team-chat endpoints.
func chatAPIRoutes(d ChatDeps) []Route {
	r := newChatRoutes(d)
	return []Route{
		{Method: "POST", Path: "/api/connect/message/:tenant", Summary: "Post into a chat channel (to = channel name), or send a direct message (target = user)", Tag: "chat", Auth: AuthKeyOnly, Access: Access{Perm: "connect.post", Scope: ScopeTenant, User: UserOwnMessages}, Request: "ConnectMessage", Response: "ConnectMessageSent", Handler: r.message},
		{Method: "POST", Path: "/api/connect/agent/:tenant", Summary: "Provision an AI agent: its extension (created when missing) and chat account; answers the provisioning bundle with both passwords, once", Tag: "chat", Auth: AuthKeyOnly, Access: agentAccess, Request: "AgentProvision", Response: "AgentBundle", Status: 201, Handler: r.provision},
		{Method: "POST", Path: "/api/connect/agent/:tenant/:extension/rotate", Summary: "New chat password for an agent (the old one stops working at once; SIP secret unchanged); answers the same bundle", Tag: "chat", Auth: AuthKeyOnly, Access: agentAccess, Request: "Empty", Response: "AgentBundle", Handler: r.rotate},
	}
}

// agentAccess: provisioning needs connect.agents in the tenant; user keys may not.
var agentAccess = Access{Perm: "connect.agents", Scope: ScopeTenant}

var errChatUnavailable = newError(fiber.StatusServiceUnavailable, "chat_unavailable", "the chat server is not configured or not reachable; try again later")

// chatReady refuses when no chat server is configured.
func (r *chatRoutes) chatReady() error {
	if r.Chat == nil || !r.Chat.Config().Enabled() {
		return errChatUnavailable
	}
	return nil
}

// chatErr turns a chat server failure into the client's answer.
func chatErr(err error) error {
	if errors.Is(err, chat.ErrUnavailable) {
		return fmt.Errorf("%w: %w", errChatUnavailable, err)
	}
	return err
}

type connectMessage struct {
	Target   string `json:"target"`
	To       string `json:"to"`
	Body     string `json:"body"`
	FromName string `json:"from_name"`
	BodyType string `json:"body_type"`
	FromExt  string `json:"from_ext"`
}

var (
	extensionRe   = regexp.MustCompile(`^[0-9]{2,10}$`)
	channelNameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
)

// maxChatBody bounds a message body (characters).
const maxChatBody = 40000

func (m *connectMessage) validate() error {
	verr := &models.ValidationError{Fields: map[string]string{}}
	switch m.Target {
	case "", "channel":
		if !channelNameRe.MatchString(m.To) {
			verr.Fields["to"] = "required: a chat channel name"
		}
	case "user":
		if !extensionRe.MatchString(m.To) {
			verr.Fields["to"] = "required: the recipient's extension"
		}
		if m.FromExt != "" && !extensionRe.MatchString(m.FromExt) {
			verr.Fields["from_ext"] = "an extension number"
		}
	default:
		verr.Fields["target"] = `"user" for a direct message; omit for a channel message`
	}
	switch {
	case strings.TrimSpace(m.Body) == "":
		verr.Fields["body"] = "required"
	case utf8.RuneCountInString(m.Body) > maxChatBody:
		verr.Fields["body"] = fmt.Sprintf("at most %d characters", maxChatBody)
	}
	switch m.BodyType {
	case "", "text":
	case "JSON", "json":
		if !json.Valid([]byte(m.Body)) {
			verr.Fields["body"] = "body_type JSON: body must be a valid JSON document"
		}
	default:
		verr.Fields["body_type"] = `"JSON" or omitted`
	}
	if utf8.RuneCountInString(m.FromName) > 64 || strings.ContainsAny(m.FromName, "\r\n") {
		verr.Fields["from_name"] = "one line, at most 64 characters"
	}
	if len(verr.Fields) > 0 {
		return verr
	}
	return nil
}

// message posts into a channel or sends a direct message (spec §4).
func (r *chatRoutes) message(c *fiber.Ctx) error {
	o := tenantOwner(c)
	var in connectMessage
	if err := decodeAction(c, &in); err != nil {
		return err
	}
	if err := in.validate(); err != nil {
		return err
	}
	if err := r.chatReady(); err != nil {
		return err
	}
	ctx, cancel := actionContext(c)
	defer cancel()
	if in.Target == "user" {
		return r.direct(c, ctx, o, in)
	}
	return r.channel(c, ctx, o, in)
}

// channelFor finds a channel by name within the tenant.
func (r *chatRoutes) channelFor(ctx context.Context, o models.Owner, name string) (models.Record, error) {
	recs, err := r.Store.Records(ctx, r.Store.Registry().Resource("chat_channels"), o, map[string]any{"name": name})
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, newError(fiber.StatusNotFound, "channel_not_found", "no chat channel "+name+" in tenant "+o.Tenant)
	}
	return recs[0], nil
}

// channel accepts a channel message. For tenant and platform keys the
// channel's check (it exists here and is not archived) is part of the one
// insert that queues the message; only a refusal reads the channel, to
// say why. A user key's post reads the channel first (read-only and
// private channels refuse it).
func (r *chatRoutes) channel(c *fiber.Ctx, ctx context.Context, o models.Owner, in connectMessage) error {
	if p := principal(c); p.Kind == "user_key" {
		ch, err := r.channelFor(ctx, o, in.To)
		if err != nil {
			return err
		}
		if err := channelRefusal(ch, in.To); err != nil {
			return err
		}
		if ro, _ := ch["read_only"].(bool); ro {
			return newError(fiber.StatusForbidden, "channel_read_only", "only administrators and integrations post in read-only channel "+in.To)
		}
		if ch["visibility"] == "private" && !listHas(ch["members"], p.Extension) {
			return newError(fiber.StatusForbidden, "not_in_channel", "extension "+p.Extension+" is not a member of private channel "+in.To)
		}
	}
	room := chat.RoomLocal(o.Tenant, in.To)
	m := chat.ChannelMessage{Room: room, Body: in.Body, FromName: in.FromName, JSON: strings.EqualFold(in.BodyType, "json")}
	ev := chat.Event{Tenant: o.Tenant, Channel: in.To, FromName: in.FromName, Body: in.Body}
	for attempt := 0; ; attempt++ {
		_, ok, err := r.Queue.EnqueueIn(ctx, o.TenantID, m, ev)
		if err != nil {
			return chatErr(err)
		}
		if ok {
			break
		}
		ch, err := r.channelFor(ctx, o, in.To)
		if err != nil {
			return err
		}
		if err := channelRefusal(ch, in.To); err != nil {
			return err
		}
		if attempt > 0 { // unarchived between the insert and the read: once more, then give up
			return newError(fiber.StatusConflict, "conflict", "chat channel "+in.To+" changed while posting; try again")
		}
	}
	return c.JSON(fiber.Map{"status": "sent", "channel": in.To, "jid": r.Chat.RoomJID(room)})
}

// channelRefusal is why a channel takes no posts at all (archived).
func channelRefusal(ch models.Record, name string) error {
	if archived, _ := ch["archived"].(bool); archived {
		return newError(fiber.StatusGone, "channel_is_archived", "chat channel "+name+" is archived")
	}
	return nil
}

// listHas reports whether a decoded JSON list holds the string s.
func listHas(list any, s string) bool {
	items, _ := list.([]any)
	for _, it := range items {
		if it == s {
			return true
		}
	}
	return false
}

func (r *chatRoutes) direct(c *fiber.Ctx, ctx context.Context, o models.Owner, in connectMessage) error {
	p := principal(c)
	from := in.FromExt
	if p.Kind == "user_key" {
		if from != "" && from != p.Extension {
			return newError(fiber.StatusForbidden, "forbidden", "a user key sends only as its own extension")
		}
		from = p.Extension
	}
	if from == "" {
		return &models.ValidationError{Fields: map[string]string{"from_ext": "required: the sender's extension"}}
	}
	for _, ext := range []string{in.To, from} {
		has, err := r.Store.HasChatAccount(ctx, o, ext)
		if err != nil {
			return err
		}
		if !has {
			return newError(fiber.StatusNotFound, "user_not_found", "extension "+ext+" has no chat account in tenant "+o.Tenant)
		}
	}
	// send_message succeeds even for an account that does not exist, so
	// the recipient is checked on the chat server too.
	to, fromLocal := chat.UserLocal(o.Tenant, in.To), chat.UserLocal(o.Tenant, from)
	ok, err := r.Chat.CheckAccount(ctx, to)
	if err != nil {
		return chatErr(err)
	}
	if !ok {
		return newError(fiber.StatusNotFound, "user_not_found", "extension "+in.To+" has no account on the chat server (rotate its password to recreate it)")
	}
	if err := r.Chat.SendDirect(ctx, fromLocal, to, in.Body); err != nil {
		return chatErr(err)
	}
	return c.JSON(fiber.Map{"status": "sent", "to": in.To, "target": "user", "jid": r.Chat.UserJID(to), "from": r.Chat.UserJID(fromLocal)})
}

type agentProvision struct {
	Extension    string `json:"extension"`
	FirstName    string `json:"first_name"`
	LastName     string `json:"last_name"`
	ChatPassword string `json:"chat_password"`
	SIPPassword  string `json:"sip_password"`
}

var chatPasswordRe = regexp.MustCompile(`^[!-~]{12,128}$`)

// provision creates (when missing) an ai_agent extension and its chat
// account and answers the bundle (spec §2) with both passwords, once.
func (r *chatRoutes) provision(c *fiber.Ctx) error {
	o := tenantOwner(c)
	var in agentProvision
	if err := decodeAction(c, &in); err != nil {
		return err
	}
	verr := &models.ValidationError{Fields: map[string]string{}}
	if !extensionRe.MatchString(in.Extension) {
		verr.Fields["extension"] = "required: 2 to 10 digits"
	}
	if in.ChatPassword != "" && !chatPasswordRe.MatchString(in.ChatPassword) {
		verr.Fields["chat_password"] = "12 to 128 printable characters without spaces"
	}
	if len(verr.Fields) > 0 {
		return verr
	}
	if err := r.chatReady(); err != nil {
		return err
	}
	ctx, cancel := actionContext(c)
	defer cancel()
	if err := r.Chat.Status(ctx); err != nil {
		return chatErr(err)
	}
	has, err := r.Store.HasChatAccount(ctx, o, in.Extension)
	if err != nil {
		return err
	}
	if has {
		return newError(fiber.StatusConflict, "conflict", fmt.Sprintf("extension %s already has a chat account; rotate its password with POST /api/connect/agent/%s/%s/rotate", in.Extension, o.Tenant, in.Extension))
	}
	created, err := r.ensureExtension(ctx, o, in)
	if err != nil {
		return err
	}
	password := in.ChatPassword
	if password == "" {
		password = newChatPassword()
	}
	undo := func() {
		uctx := context.WithoutCancel(ctx)
		_ = r.Store.DeleteChatAccount(uctx, o, in.Extension)
		if created {
			_ = r.Store.Delete(uctx, r.Store.Registry().Resource("extensions"), o, in.Extension)
		}
	}
	if err := r.Store.CreateChatAccount(ctx, o, in.Extension, password, in.ChatPassword == ""); err != nil {
		undo()
		return err
	}
	local := chat.UserLocal(o.Tenant, in.Extension)
	err = r.Chat.Register(ctx, local, password)
	if chat.IsConflict(err) {
		// The chat server kept an account the database no longer had: the
		// database is the truth, so it takes the new password.
		err = r.Chat.ChangePassword(ctx, local, password)
	}
	if err == nil {
		err = r.setAgentName(ctx, o, in.Extension)
	}
	if err != nil {
		undo()
		return chatErr(err)
	}
	r.Sync.Forget(local) // a new account: its bookmarks are set afresh
	r.Sync.Notify(o.Tenant)
	b, err := r.bundle(ctx, o, in.Extension, password, "provisioned")
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(b)
}

// ensureExtension creates the agent's extension (type ai_agent) when it is
// missing, or applies a given SIP password to an existing one.
func (r *chatRoutes) ensureExtension(ctx context.Context, o models.Owner, in agentProvision) (created bool, err error) {
	res := r.Store.Registry().Resource("extensions")
	_, err = r.Store.Get(ctx, res, o, in.Extension)
	if errors.Is(err, models.ErrNotFound) {
		rec := map[string]any{"name": in.Extension, "type": "ai_agent"}
		for k, v := range map[string]string{"first_name": in.FirstName, "last_name": in.LastName, "sip_secret": in.SIPPassword} {
			if v != "" {
				rec[k] = v
			}
		}
		if _, err := r.Store.Create(ctx, res, o, rec); err != nil {
			return false, renameField(err, "sip_secret", "sip_password")
		}
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if in.SIPPassword != "" {
		if _, err := r.Store.Update(ctx, res, o, in.Extension, map[string]any{"sip_secret": in.SIPPassword}); err != nil {
			return false, renameField(err, "sip_secret", "sip_password")
		}
	}
	return false, nil
}

// renameField reports an extension validation error under the request's field name.
func renameField(err error, from, to string) error {
	var ve *models.ValidationError
	if errors.As(err, &ve) {
		if msg, ok := ve.Fields[from]; ok {
			delete(ve.Fields, from)
			ve.Fields[to] = msg
		}
	}
	return err
}

// rotate gives an agent a new chat password; its sessions are ended so the
// old password stops working at once.
func (r *chatRoutes) rotate(c *fiber.Ctx) error {
	o := tenantOwner(c)
	if len(strings.TrimSpace(string(c.Body()))) > 0 {
		var in struct{}
		if err := decodeAction(c, &in); err != nil {
			return err
		}
	}
	ext := strings.Clone(c.Params("extension"))
	if err := r.chatReady(); err != nil {
		return err
	}
	ctx, cancel := actionContext(c)
	defer cancel()
	has, err := r.Store.HasChatAccount(ctx, o, ext)
	if err != nil {
		return err
	}
	if !has {
		return newError(fiber.StatusNotFound, "not_found", "extension "+ext+" has no chat account; provision it with POST /api/connect/agent/"+o.Tenant)
	}
	password := newChatPassword()
	local := chat.UserLocal(o.Tenant, ext)
	err = r.Chat.ChangePassword(ctx, local, password)
	var ae *chat.APIError
	if errors.As(err, &ae) {
		// The chat server lost the account (a new spool): recreate it,
		// with its memberships and bookmarks.
		if err = r.Chat.Register(ctx, local, password); err == nil {
			r.Sync.Forget(local)
			r.Sync.Notify(o.Tenant)
			err = r.setAgentName(ctx, o, ext)
		}
	}
	if err != nil {
		return chatErr(err)
	}
	if err := r.Chat.KickUser(ctx, local); err != nil {
		return chatErr(err)
	}
	if err := r.Store.SetChatPassword(ctx, o, ext, password, true); err != nil {
		return err
	}
	// The same bundle as provisioning (service interface: "same bundle
	// with a new chat password"), status included.
	b, err := r.bundle(ctx, o, ext, password, "provisioned")
	if err != nil {
		return err
	}
	return c.JSON(b)
}

// newChatPassword is a generated chat password: 24 characters from the
// same alphabet as API key bodies (about 140 bits).
func newChatPassword() string {
	return strings.TrimPrefix(models.NewAPIKeyValue(), "sb_")[:24]
}

// bundle is the provisioning answer, exactly the fields of the service
// interface's "Agent provisioning bundle" table (no more: the login JID is
// connect.username at the chat domain).
func (r *chatRoutes) bundle(ctx context.Context, o models.Owner, ext, password, status string) (fiber.Map, error) {
	recs, err := r.Store.Records(ctx, r.Store.Registry().Resource("extensions"), o, map[string]any{"name": ext})
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, models.ErrNotFound
	}
	secret, _ := recs[0]["sip_secret"].(string)
	cfg := r.Chat.Config()
	return fiber.Map{
		"status":    status,
		"tenant":    o.Tenant,
		"extension": ext,
		"connect": fiber.Map{
			"username":      chat.UserLocal(o.Tenant, ext),
			"jid":           chat.UserLocal(o.Tenant, ext) + "@" + cfg.Domain,
			"domain":        cfg.Domain,
			"password":      password,
			"websocket_url": cfg.WSURL,
			"login_url":     r.BaseURL + "/chat/?tenant=" + url.QueryEscape(o.Tenant),
		},
		"sip": fiber.Map{
			"extension":     ext,
			"auth_id":       naming.UserID(o.Tenant, ext),
			"password":      secret,
			"domain":        r.SIPDomain,
			"websocket_url": r.SIPWSURL,
		},
		"endpoints": fiber.Map{
			"management": r.BaseURL + "/api",
			"messaging":  r.BaseURL + "/api/messaging",
			"reporting":  r.BaseURL + "/api/reports",
			"media":      r.BaseURL + "/",
			"connect_ws": cfg.WSURL,
		},
	}, nil
}

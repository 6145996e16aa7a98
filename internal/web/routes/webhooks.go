package routes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"mime"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/comms/chat"
	"github.com/switchboard/switchboard/internal/models"
)

// Incoming webhooks (resources.md §6.3): Slack-compatible posts into a
// tenant's chat channel, authenticated by the secret token in the URL.

// maxWebhookBody bounds a post (413 beyond it).
const maxWebhookBody = 256 << 10

// Per-webhook rate: one message a second sustained, bursts of ten.
const (
	webhookInterval = time.Second
	webhookBurst    = 10
)

// incomingWebhookRoutes declares the webhook post and token regeneration routes.
func incomingWebhookRoutes(d ChatDeps) []Route {
	r := newChatRoutes(d)
	return []Route{
		{Method: "POST", Path: "/integration/webhooks/:token", Summary: "Slack-compatible incoming webhook post into the webhook's chat channel: JSON, or a form field payload holding JSON; answers ok as plain text (Slack's error codes as plain text, or the JSON error shape with Accept: application/json)", Tag: "chat", Auth: AuthCustom, Request: "WebhookPayload", Consumes: "application/json,application/x-www-form-urlencoded", Produces: "text/plain", SlackAnswers: true, OwnBody: true, Handler: r.webhookPost},
		{Method: "POST", Path: "/api/tenants/:tenant/incoming_webhooks/:id/regenerate", Summary: "New token and URL for an incoming webhook (the old URL stops working at once); the answer shows them once", Tag: "incoming_webhooks", Auth: AuthAPI, Access: Access{Perm: "incoming_webhooks.manage", OwnPerm: "incoming_webhooks.manage_own", Scope: ScopeTenant, User: UserOwnObjects}, Request: "Empty", Response: "IncomingWebhookCreated", Handler: r.regenerate},
	}
}

// regenerate replaces a webhook's token.
func (r *chatRoutes) regenerate(c *fiber.Ctx) error {
	if own, _ := c.Locals(ownOnlyKey).(bool); own {
		res := r.Store.Registry().Resource("incoming_webhooks")
		if err := checkOwn(c.UserContext(), r.Store, principal(c), res, tenantOwner(c), c.Params("id"), nil); err != nil {
			return err
		}
	}
	rec, err := r.Store.RegenerateWebhookToken(c.UserContext(), tenantOwner(c), c.Params("id"))
	if err != nil {
		return err
	}
	return c.JSON(rec)
}

// slackError answers as Slack does (plain-text code), or with the
// project's JSON error shape when the caller asks for JSON.
func slackError(c *fiber.Ctx, status int, code, msg string) error {
	if strings.Contains(c.Get(fiber.HeaderAccept), "application/json") {
		return c.Status(status).JSON(errorBody{Error: msg, Code: code})
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
	return c.Status(status).SendString(code)
}

// webhookPost accepts one incoming-webhook message.
func (r *chatRoutes) webhookPost(c *fiber.Ctx) error {
	token := strings.Clone(c.Params("token"))
	log := logger(c).With("webhook", redactPath(c.Path()))
	if len(c.Body()) > maxWebhookBody {
		return slackError(c, fiber.StatusRequestEntityTooLarge, "payload_too_large", "posts are limited to 256 KiB")
	}
	ctx := c.UserContext()
	o, hook, err := r.Store.WebhookByToken(ctx, token)
	if errors.Is(err, models.ErrNotFound) {
		return slackError(c, fiber.StatusNotFound, "no_service", "no such webhook")
	}
	if err != nil {
		log.Error("webhook lookup failed", "error", err)
		return slackError(c, fiber.StatusInternalServerError, "rollup_error", "internal error")
	}
	if on, _ := hook["enabled"].(bool); !on {
		// A disabled hook posts and stores nothing; Slack senders stop on no_service.
		log.Debug("post to a disabled webhook dropped", "tenant", o.Tenant)
		return slackError(c, fiber.StatusNotFound, "no_service", "this webhook is disabled")
	}
	raw, perr := webhookJSON(c)
	if perr != nil {
		return slackError(c, fiber.StatusBadRequest, perr.Code, perr.Msg)
	}
	// The API's rule (checkUTF8): invalid UTF-8, or an escape naming no
	// character, is refused rather than stored as U+FFFD.
	if checkUTF8(raw) != nil {
		return slackError(c, fiber.StatusBadRequest, "invalid_payload", "the payload must be valid UTF-8")
	}
	payload, err := chat.ParsePayload(raw)
	if pe, ok := chat.IsPayloadError(err); ok {
		return slackError(c, fiber.StatusBadRequest, pe.Code, pe.Msg)
	}
	if err := r.chatReady(); err != nil {
		return slackError(c, fiber.StatusServiceUnavailable, "chat_unavailable", "the chat server is not configured")
	}
	channel, _ := hook["channel"].(string)
	ch, err := r.channelFor(ctx, o, channel)
	if err != nil {
		return slackError(c, fiber.StatusNotFound, "channel_not_found", "the webhook's channel no longer exists")
	}
	if archived, _ := ch["archived"].(bool); archived {
		return slackError(c, fiber.StatusGone, "channel_is_archived", "the webhook's channel is archived")
	}
	id, _ := hook["id"].(int64)
	if wait, ok := r.allow(ctx, id); !ok {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(int((wait+time.Second-1)/time.Second)))
		return slackError(c, fiber.StatusTooManyRequests, "rate_limited", "at most one message a second per webhook (bursts of ten)")
	}
	name, _ := hook["name"].(string)
	pic, _ := hook["picture"].(string)
	if strings.HasPrefix(pic, "data:") {
		pic = r.Store.WebhookPictureURL(id, pic)
	}
	out := chat.Render(payload)
	actx, cancel := actionContext(c)
	defer cancel()
	m := chat.ChannelMessage{Room: chat.RoomLocal(o.Tenant, channel), Body: out.Body, HTML: out.HTML, Unstyled: out.Unstyled, FromName: name, Avatar: pic}
	if _, err := r.Queue.Enqueue(actx, m, chat.Event{Tenant: o.Tenant, Channel: channel, FromName: name, Body: out.Body}); err != nil {
		log.Warn("webhook post not accepted", "error", err)
		setRetryAfter(c, err)
		return slackError(c, fiber.StatusServiceUnavailable, "chat_unavailable", "the chat server is not reachable; try again later")
	}
	if err := r.Store.WebhookUsed(context.WithoutCancel(ctx), o, id); err != nil {
		log.Warn("webhook counter not updated", "error", err)
	}
	c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
	return c.SendString("ok")
}

// webhookJSON extracts the payload's JSON from the encodings of §6.3: a
// JSON body; a form (urlencoded or multipart) with a payload field; a
// form-encoded body that is itself JSON.
func webhookJSON(c *fiber.Ctx) ([]byte, *chat.PayloadError) {
	body := bytes.TrimSpace(c.Body())
	ct, _, _ := mime.ParseMediaType(c.Get(fiber.HeaderContentType))
	bad := &chat.PayloadError{Code: "invalid_payload", Msg: "send JSON, or a form field payload holding JSON"}
	switch ct {
	case "application/json":
		return body, nil
	case "application/x-www-form-urlencoded":
		if bytes.HasPrefix(body, []byte("{")) && json.Valid(body) {
			return body, nil
		}
		form, err := url.ParseQuery(string(body))
		if err != nil || form.Get("payload") == "" {
			return nil, bad
		}
		return []byte(form.Get("payload")), nil
	case "multipart/form-data":
		if v := c.FormValue("payload"); v != "" {
			return []byte(v), nil
		}
	}
	return nil, bad
}

// gcra is a generic cell rate limiter in one script: it keeps the
// theoretical arrival time per key and refuses a request that would run
// more than the burst ahead of it, answering how long to wait.
var gcra = redis.NewScript(`
local now = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new = tat + interval
local ahead = new - now
if ahead > burst * interval then
  return ahead - burst * interval
end
redis.call('SET', KEYS[1], new, 'PX', math.ceil(ahead))
return 0`)

// allow applies the per-webhook rate limit. Redis trouble lets the post
// through (the limit protects the channel, not the server).
func (r *chatRoutes) allow(ctx context.Context, id int64) (time.Duration, bool) {
	now := time.Now().UnixMilli()
	wait, err := gcra.Run(ctx, r.Redis, []string{r.KeyPrefix + "webhook:rate:" + strconv.FormatInt(id, 10)}, now, webhookInterval.Milliseconds(), webhookBurst).Int64()
	if err != nil {
		slog.WarnContext(ctx, "webhook rate limit unavailable", "error", err)
		return 0, true
	}
	return time.Duration(wait) * time.Millisecond, wait == 0
}

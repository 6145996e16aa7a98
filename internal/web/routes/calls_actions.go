package routes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"

	"github.com/switchboard/switchboard/internal/freeswitch/calls"
	"github.com/switchboard/switchboard/internal/freeswitch/command"
	"github.com/switchboard/switchboard/internal/models"
)

var (
	dialableRe = regexp.MustCompile(`^[0-9+*#]{1,32}$`)
	e164Re     = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)
	fileRe     = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
)

// actionTimeout bounds a command sent to FreeSWITCH. Commands run on a
// context detached from the client's, so a client hanging up mid-request
// cannot leave a half-sent command.
const actionTimeout = 5 * time.Second

func actionContext(c *fiber.Ctx) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(c.UserContext()), actionTimeout)
}

// decodeAction decodes a JSON action body into v, rejecting unknown fields.
func decodeAction(c *fiber.Ctx, v any) error {
	if err := checkUTF8(c.Body()); err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(string(c.Body())))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return newError(fiber.StatusBadRequest, "bad_request", "body must be a JSON object with the documented fields: "+err.Error())
	}
	return nil
}

type callRequest struct {
	From      string `json:"from"`
	To        string `json:"to"`
	Extension string `json:"extension"`
	Tenant    string `json:"tenant"`
}

// callerExtension resolves who places a call: a user key is bound to its
// extension; a tenant key names one; a platform key names tenant and one.
func callerExtension(p *Principal, in callRequest) (tenant, ext string, err error) {
	switch p.Kind {
	case "user_key":
		if in.Extension != "" && in.Extension != p.Extension {
			return "", "", newError(fiber.StatusForbidden, "forbidden", "a user key places calls only as its own extension")
		}
		tenant, ext = p.Tenant, p.Extension
	case "tenant_key":
		tenant, ext = p.Tenant, in.Extension
	default:
		tenant, ext = in.Tenant, in.Extension
	}
	if in.Tenant != "" && !strings.EqualFold(in.Tenant, tenant) {
		return "", "", newError(fiber.StatusForbidden, "forbidden", "this credential may not act in tenant "+in.Tenant)
	}
	verr := &models.ValidationError{Fields: map[string]string{}}
	if tenant == "" {
		verr.Fields["tenant"] = "required with a platform key"
	}
	if ext == "" {
		verr.Fields["extension"] = "required unless the key is bound to an extension"
	}
	if len(verr.Fields) > 0 {
		return "", "", verr
	}
	return tenant, ext, nil
}

// placeCall starts a callback call (spec §4 behaviour 1): FreeSWITCH rings
// the caller's mobile through a loopback leg into the tenant's context (so
// the tenant's outbound routes pick the trunk); once it answers, to is
// routed in the same context and bridged. The request never waits for the
// phone: it answers 202 with the channel id the A leg's events will carry.
func (r *callRoutes) placeCall(c *fiber.Ctx) error {
	p := principal(c)
	var in callRequest
	if err := decodeAction(c, &in); err != nil {
		return err
	}
	verr := &models.ValidationError{Fields: map[string]string{}}
	if !e164Re.MatchString(in.From) {
		verr.Fields["from"] = "required: the caller's mobile in E.164 (+15551234567)"
	}
	if !dialableRe.MatchString(in.To) {
		verr.Fields["to"] = "required: 1 to 32 of 0-9 + * #"
	}
	if len(verr.Fields) > 0 {
		return verr
	}
	tenant, ext, err := callerExtension(p, in)
	if err != nil {
		return err
	}
	ctx := c.UserContext()
	owner, err := r.Store.Tenant(ctx, tenant)
	if err != nil {
		return fmt.Errorf("tenant %q: %w", tenant, err)
	}
	tenant = owner.Tenant
	rec, err := r.Store.Get(ctx, r.Store.Registry().Resource("extensions"), owner, ext)
	if err != nil {
		return fmt.Errorf("extension %q: %w", ext, err)
	}
	if mobile, _ := rec["mobile"].(string); mobile == "" || mobile != in.From {
		return newError(fiber.StatusForbidden, "from_not_mobile", "from must equal the mobile configured on extension "+ext)
	}
	node, ok := r.Control.PickNode()
	if !ok {
		return errNoNodeUp
	}
	userVars, err := r.UserVars(ctx, tenant, ext)
	if err != nil {
		return fmt.Errorf("extension %q: %w", ext, err)
	}
	id := uuid.NewString()
	cmd, err := callbackCommand(id, append(userVars, [2]string{"sb_call", id}), in.From, in.To)
	if err != nil {
		return err
	}
	chID, err := r.originate(c, calls.Call{ID: id, Node: node, Tenant: tenant, Extension: ext, From: in.From, To: in.To}, ext, cmd)
	if err != nil {
		return err
	}
	loc := "/api/telephony/calls/" + id
	c.Set(fiber.HeaderLocation, loc)
	return c.Status(fiber.StatusAccepted).JSON(fiber.Map{
		"status": "dialing", "id": id, "state": calls.CallQueued, "location": loc,
		"channel": chID, "uuid": id, "node": node,
		"tenant": tenant, "extension": ext, "from": in.From, "to": in.To,
	})
}

// originate places call (calls.Control.Originate) on a context detached
// from the client's.
func (r *callRoutes) originate(c *fiber.Ctx, call calls.Call, name string, cmd command.Command) (string, error) {
	actx, cancel := actionContext(c)
	defer cancel()
	return r.Control.Originate(actx, call, name, cmd)
}

// getCall answers GET /api/telephony/calls/<id>: a callback call's state.
func (r *callRoutes) getCall(c *fiber.Ctx) error {
	p := principal(c)
	if !p.Can("calls.read") {
		return newError(fiber.StatusForbidden, "forbidden", "this credential lacks the permission calls.read")
	}
	call, err := r.Tracker.Call(c.UserContext(), strings.Clone(c.Params("id")))
	if errors.Is(err, calls.ErrCallNotFound) {
		return newError(fiber.StatusNotFound, "call_not_found", "no call has this id (calls are kept 24 hours)")
	}
	if err != nil {
		return err
	}
	if !p.MayTenant(call.Tenant) || (p.Kind == "user_key" && call.Extension != p.Extension) {
		return newError(fiber.StatusNotFound, "call_not_found", "no call has this id (calls are kept 24 hours)")
	}
	return c.JSON(call)
}

// callbackCommand builds a callback (or widget) call's originate
// (command.Callback); a value no command can carry is a 400 naming it.
func callbackCommand(id string, userVars [][2]string, mobile, to string) (command.Command, error) {
	cmd, err := command.Callback(id, userVars, mobile, to)
	return cmd, commandError(err)
}

// commandError turns a value no FreeSWITCH command can carry into a 400
// naming the field; other errors pass unchanged.
func commandError(err error) error {
	if ve, ok := command.IsValueError(err); ok {
		return models.FieldError(ve.Name, "not usable in a FreeSWITCH command")
	}
	return err
}

type channelRequest struct {
	Channel  string `json:"channel"`
	To       string `json:"to"`
	Action   string `json:"action"`
	Filename string `json:"filename"`
}

// actionTarget decodes an action body and loads its live channel.
// actionTarget reads a live-call action's body and finds its channel.
// The body is checked first (check, the action's own rules), then that a
// node is connected (503 freeswitch_unavailable, as calls answer: without
// a node no channel can be acted on), and only then is the channel looked
// up, so a bad request is a 400 whatever the channel.
func (r *callRoutes) actionTarget(c *fiber.Ctx, check func(*channelRequest) error) (channelRequest, string, string, string, error) {
	var in channelRequest
	p := principal(c)
	if err := decodeAction(c, &in); err != nil {
		return in, "", "", "", err
	}
	if in.Channel == "" {
		return in, "", "", "", models.FieldError("channel", "required")
	}
	if check != nil {
		if err := check(&in); err != nil {
			return in, "", "", "", err
		}
	}
	if !r.Control.AnyNode() {
		return in, "", "", "", errNoNodeUp
	}
	ch, err := r.channel(c.UserContext(), p, in.Channel, true)
	if err != nil {
		return in, "", "", "", err
	}
	if _, err := command.SafeArg(ch.UUID); err != nil {
		return in, "", "", "", fmt.Errorf("channel %s: stored uuid unusable: %w", ch.ID, err)
	}
	return in, ch.Node, ch.UUID, ch.Tenant, nil
}

func (r *callRoutes) hangup(c *fiber.Ctx) error {
	in, node, id, _, err := r.actionTarget(c, nil)
	if err != nil {
		return err
	}
	ctx, cancel := actionContext(c)
	defer cancel()
	if err := r.Control.Hangup(ctx, node, id); err != nil {
		return err
	}
	return c.JSON(fiber.Map{"status": "hangup_requested", "channel": in.Channel})
}

func (r *callRoutes) transfer(c *fiber.Ctx) error {
	in, node, id, tenant, err := r.actionTarget(c, func(in *channelRequest) error {
		if !dialableRe.MatchString(in.To) {
			return models.FieldError("to", "required: an extension or number (1 to 32 of 0-9 + * #)")
		}
		return nil
	})
	if err != nil {
		return err
	}
	if tenant == "" {
		return newError(fiber.StatusConflict, "no_tenant_context", "this channel belongs to no tenant, so there is no context to transfer it in")
	}
	ctx, cancel := actionContext(c)
	defer cancel()
	if err := r.Control.Transfer(ctx, node, id, in.To, tenant); err != nil {
		return commandError(err)
	}
	return c.JSON(fiber.Map{"status": "transferred", "channel": in.Channel, "to": in.To})
}

func (r *callRoutes) record(c *fiber.Ctx) error {
	in, node, id, tenant, err := r.actionTarget(c, func(in *channelRequest) error {
		if in.Action == "" {
			in.Action = "start"
		}
		if in.Action != "start" && in.Action != "stop" {
			return models.FieldError("action", "must be start or stop")
		}
		if in.Filename != "" && (!fileRe.MatchString(in.Filename) || strings.Contains(in.Filename, "..")) {
			return models.FieldError("filename", "letters, digits, '.', '_' and '-' only (at most 100), no '..'")
		}
		return nil
	})
	if err != nil {
		return err
	}
	action, name := in.Action, in.Filename
	if name == "" && action == "stop" {
		name = "all"
	}
	// "all" is uuid_record's word for every recording of the channel, and
	// only when stopping: any other name (also "all" when starting) is a
	// file in the tenant's recordings directory.
	path := name
	if !(action == "stop" && name == "all") {
		if name == "" {
			name = time.Now().UTC().Format("20060102-150405") + "-" + id[:min(8, len(id))]
		}
		if !strings.HasSuffix(name, ".wav") {
			name += ".wav"
		}
		dir := tenant
		if dir == "" {
			dir = "_platform"
		}
		path = strings.TrimRight(r.Recordings, "/") + "/" + dir + "/" + name
	}
	ctx, cancel := actionContext(c)
	defer cancel()
	if err := r.Control.Record(ctx, node, id, action, path); err != nil {
		return err
	}
	status := "recording_started"
	if action == "stop" {
		status = "recording_stopped"
	}
	return c.JSON(fiber.Map{"status": status, "channel": in.Channel, "path": path})
}

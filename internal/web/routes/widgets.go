package routes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/nyaruka/phonenumbers"

	"github.com/switchboard/switchboard/internal/freeswitch/calls"
	"github.com/switchboard/switchboard/internal/freeswitch/schedule"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/web/captcha"
)

// The click-to-call widget's public endpoint: a visitor's browser, on one
// of the widget's allowed origins, asks Switchboard to ring the visitor's
// phone and connect it to the widget's destination. There is no credential:
// the widget's public_id names it, the Origin header must be one of its
// allowed_origins (the browser sets it; CORS answers only those origins),
// and each visitor address may place max_calls_per_hour_per_ip calls.

// widgetRoutes are the public widget endpoints (no credential; the
// handler checks the origin and the limit).
func (r *callRoutes) widgetRoutes() []Route {
	return []Route{
		{Method: "OPTIONS", Path: "/widgets/:public_id/call", Summary: "CORS preflight of a click-to-call widget's call: 204 with Access-Control-Allow-Origin for the widget's allowed origins only (403 otherwise)", Tag: "click_to_call", Status: 204, Handler: r.widgetPreflight},
		{Method: "POST", Path: "/widgets/:public_id/call", Summary: "A website visitor presses a click-to-call widget's button: callback mode rings the visitor's phone and connects it to the widget's destination (202); webrtc mode answers a short-lived SIP user for the browser's SIP client, which can call only the widget's destination (201); only from the widget's allowed origins (Origin header), max_calls_per_hour_per_ip per address (429), 409 outside the widget's schedule", Tag: "click_to_call",
			Request: "WidgetCallRequest", Response: "WidgetCallPlaced", Status: 202, Answers: map[int]string{201: "WidgetWebRTCSession"}, Handler: r.widgetCall},
	}
}

// validVisitorName reports whether s is what a visitor may give as a name
// (it becomes part of the caller id name the destination sees): at most 40
// letters, digits, spaces, dots and hyphens. A loop over the unicode
// tables, not the equivalent regular expression: compiled, its \p{L} and
// \p{N} classes held some 2 MB of every process's heap.
func validVisitorName(s string) bool {
	if !utf8.ValidString(s) || utf8.RuneCountInString(s) > 40 {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsNumber(r) && r != ' ' && r != '.' && r != '-' {
			return false
		}
	}
	return true
}

// widget loads an enabled widget by public id with its tenant.
func (r *callRoutes) widget(c *fiber.Ctx) (models.Owner, models.Record, error) {
	id := c.Params("public_id")
	notFound := newError(fiber.StatusNotFound, "widget_not_found", "no click-to-call widget has this id")
	if len(id) > 64 {
		return models.Owner{}, nil, notFound
	}
	o, w, err := r.Store.FindPublic(c.UserContext(), r.Store.Registry().Resource("click_to_call_widgets"), "public_id", strings.Clone(id))
	if errors.Is(err, models.ErrNotFound) {
		return o, nil, notFound
	}
	return o, w, err
}

// widgetOrigin answers the request's Origin when the widget allows it; it
// sets the CORS answer headers for it.
func widgetOrigin(c *fiber.Ctx, w models.Record) error {
	c.Vary(fiber.HeaderOrigin)
	origin := strings.TrimSuffix(strings.ToLower(c.Get(fiber.HeaderOrigin)), "/")
	allowed, _ := w["allowed_origins"].([]any)
	for _, a := range allowed {
		if s, _ := a.(string); origin != "" && strings.TrimSuffix(strings.ToLower(s), "/") == origin {
			c.Set(fiber.HeaderAccessControlAllowOrigin, c.Get(fiber.HeaderOrigin))
			return nil
		}
	}
	return newError(fiber.StatusForbidden, "origin_not_allowed", "this page's origin may not use this widget")
}

func (r *callRoutes) widgetPreflight(c *fiber.Ctx) error {
	_, w, err := r.widget(c)
	if err != nil {
		return err
	}
	if err := widgetOrigin(c, w); err != nil {
		return err
	}
	c.Set(fiber.HeaderAccessControlAllowMethods, "POST")
	c.Set(fiber.HeaderAccessControlAllowHeaders, "Content-Type")
	c.Set(fiber.HeaderAccessControlMaxAge, "600")
	return c.SendStatus(fiber.StatusNoContent)
}

type widgetCallRequest struct {
	Number       string `json:"number"`
	Name         string `json:"name"`
	CaptchaToken string `json:"captcha_token"`
}

// checkCaptcha verifies the visitor's token with the configured provider:
// 400 without one, 403 when the provider rejects it, 503 when the
// provider cannot be asked (the call is not placed).
func (r *callRoutes) checkCaptcha(c *fiber.Ctx, token string) error {
	if token == "" || len(token) > captcha.MaxTokenLen {
		return &models.ValidationError{Fields: map[string]string{"captcha_token": "required by this widget: the token of the captcha shown on the page"}}
	}
	err := r.Captcha.Verify(c.UserContext(), token, c.IP())
	var rejected *captcha.ErrRejected
	switch {
	case err == nil:
		return nil
	case errors.As(err, &rejected):
		return newError(fiber.StatusForbidden, "captcha_failed", "the captcha was not solved or has expired; solve it again")
	default:
		slog.WarnContext(c.UserContext(), "captcha provider unavailable", "error", err)
		return newError(fiber.StatusServiceUnavailable, "captcha_unavailable", "the captcha cannot be checked right now; try again later")
	}
}

// widgetCall answers a visitor's press of the button. Callback mode places
// the callback: the visitor's number through the tenant's outbound routes
// (a loopback leg into the tenant context), then the widget's destination
// number in the same context, by the same originate as POST
// /api/telephony/call. Webrtc mode issues the browser a short-lived SIP user
// (widgetSession). Both modes check the origin, the schedule, the captcha
// and the per-address limit the same way.
func (r *callRoutes) widgetCall(c *fiber.Ctx) error {
	o, w, err := r.widget(c)
	if err != nil {
		return err
	}
	if err := widgetOrigin(c, w); err != nil {
		return err
	}
	if enabled, _ := w["enabled"].(bool); !enabled {
		return newError(fiber.StatusForbidden, "widget_disabled", "this click-to-call widget is switched off")
	}
	webrtc := w["mode"] == "webrtc"
	needCaptcha, _ := w["require_captcha"].(bool)
	if needCaptcha && r.Captcha == nil {
		return newError(fiber.StatusNotImplemented, "captcha_not_supported", "this widget requires a captcha, which this server cannot verify (SWITCHBOARD_CAPTCHA_VERIFY_URL and SWITCHBOARD_CAPTCHA_SECRET are not set); set require_captcha to false")
	}
	var in widgetCallRequest
	if err := decodeAction(c, &in); err != nil {
		return err
	}
	ctx := c.UserContext()
	tenant, err := r.Store.Get(ctx, r.Store.Registry().Resource("tenants"), models.Owner{}, o.Tenant)
	if err != nil {
		return err
	}
	var number string
	if webrtc {
		err = visitorName(in, w, map[string]string{})
	} else {
		number, err = visitorNumber(in, w, tenant)
	}
	if err != nil {
		return err
	}
	if err := r.widgetOpen(ctx, o, w, tenant); err != nil {
		return err
	}
	if needCaptcha {
		if err := r.checkCaptcha(c, in.CaptchaToken); err != nil {
			return err
		}
	}
	publicID := w["public_id"].(string)
	limit, _ := w["max_calls_per_hour_per_ip"].(int64)
	if retry, ok := r.limit.perHour(ctx, "widget:"+publicID+":"+c.IP(), int(limit)); !ok {
		return tooMany(c, retry, "calls from this address through this widget")
	}
	dest, _ := w["destination"].(map[string]any)
	target, _ := dest["target"].(string)
	if webrtc {
		return r.widgetSession(c, o, publicID, target, in.Name)
	}
	name := strings.TrimSpace(str(w["callerid_name_prefix"]) + " " + strings.TrimSpace(in.Name))
	vars := [][2]string{
		{"user_context", o.Tenant}, {"sb_tenant", o.Tenant}, {"sb_widget", publicID},
		{"effective_caller_id_name", name}, {"effective_caller_id_number", number},
		// The visitor is called through the tenant's outbound routes, as
		// the tenant's own call to a number the widget allows.
		{"toll_allow", "internal,local,national,international"},
	}
	if cid := str(tenant["callerid"]); cid != "" {
		vars = append(vars, [2]string{"outbound_caller_id_number", cid})
	}
	id := uuid.NewString()
	cmd, err := callbackCommand(id, append(vars, [2]string{"sb_call", id}), number, target)
	if err != nil {
		return err
	}
	node, ok := r.Control.PickNode()
	if !ok {
		return errNoNodeUp
	}
	if _, err := r.originate(c, calls.Call{ID: id, Node: node, Tenant: o.Tenant, From: number, To: target}, target, cmd); err != nil {
		return err
	}
	return c.Status(fiber.StatusAccepted).JSON(fiber.Map{"status": "dialing"})
}

// visitorNumber checks the visitor's input: a valid E.164 number in one
// of the widget's allowed countries (default the tenant's country), and a
// plain name when the widget asks for one.
func visitorNumber(in widgetCallRequest, w, tenant models.Record) (string, error) {
	fields := map[string]string{}
	num, err := phonenumbers.Parse(in.Number, "")
	if !e164Re.MatchString(in.Number) || err != nil || !phonenumbers.IsValidNumber(num) {
		fields["number"] = "required: your phone number in international format (+15551234567)"
	} else {
		countries := []string{}
		list, _ := w["allowed_countries"].([]any)
		for _, c := range list {
			countries = append(countries, strings.ToUpper(str(c)))
		}
		if len(countries) == 0 && str(tenant["country"]) != "" {
			countries = []string{strings.ToUpper(str(tenant["country"]))}
		}
		if region := phonenumbers.GetRegionCodeForNumber(num); len(countries) > 0 && !slices.Contains(countries, region) {
			fields["number"] = "this widget does not call numbers in " + region
		}
	}
	if err := visitorName(in, w, fields); err != nil {
		return "", err
	}
	return in.Number, nil
}

// visitorName checks the visitor's name (a plain name, required when the
// widget asks for one) and answers the validation error of fields plus the
// name's, if any.
func visitorName(in widgetCallRequest, w models.Record, fields map[string]string) error {
	if !validVisitorName(in.Name) {
		fields["name"] = "at most 40 letters, digits, spaces, dots and hyphens"
	} else if ask, _ := w["ask_name"].(bool); ask && strings.TrimSpace(in.Name) == "" {
		fields["name"] = "required by this widget"
	}
	if len(fields) > 0 {
		return &models.ValidationError{Fields: fields}
	}
	return nil
}

// widgetOpen refuses calls outside the widget's schedule (409 with the
// widget's closed_message).
func (r *callRoutes) widgetOpen(ctx context.Context, o models.Owner, w, tenant models.Record) error {
	id, ok := w["schedule_id"].(int64)
	if !ok {
		return nil
	}
	rec, err := r.Store.Get(ctx, r.Store.Registry().Resource("schedules"), o, fmt.Sprint(id))
	if err != nil {
		return err
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("schedule %d: %w", id, err)
	}
	var s schedule.Schedule
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("schedule %d: %w", id, err)
	}
	open, _, err := s.State(time.Now(), str(tenant["timezone"]))
	if err != nil || !open {
		msg := str(w["closed_message"])
		if msg == "" {
			msg = "closed: try again during opening hours"
		}
		return newError(fiber.StatusConflict, "closed", msg)
	}
	return nil
}

// Package features applies the feature codes callers dial (resources.md
// §2.11): the dialplan answers a code such as *78 by firing a CUSTOM
// switchboard::feature event carrying the feature, its argument and the
// caller's channel variables (sb_tenant, sb_ext, sb_pin when a PIN was
// read); this package turns each such event into a write through the
// store, so the change is validated, stored and delivered as a change
// event like any API write (directory flush, mod_callcenter, webhooks).
//
// Each node's events are read by one replica at a time (the event lease);
// a guard in Redis keyed by the event's Core-UUID and Event-Sequence makes
// a toggle apply once even when the lease moves between replicas while an
// event is in flight.
package features

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/freeswitch/esl"
	"github.com/switchboard/switchboard/internal/freeswitch/naming"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/platform/keyprefix"
)

// guardTTL is how long an applied event is remembered.
const guardTTL = time.Hour

// Applier applies feature events.
type Applier struct {
	st  *models.Store
	rdb redis.UniversalClient
	log *slog.Logger

	// MediaDir is the media library as this server reads it
	// (SWITCHBOARD_MEDIA_DIR), which the nodes mount: *732 recordings are
	// read from <MediaDir>/<tenant>/phone/<call uuid>.wav. "" refuses them.
	MediaDir string
	// KeyPrefix starts the once-guards' Redis keys: the installation's
	// (models.Store.KeyPrefix), so installations whose nodes share a Redis
	// each apply their own events. "" means "sb:".
	KeyPrefix string
}

// New returns an Applier; rdb may be nil (no once-guard).
func New(st *models.Store, rdb redis.UniversalClient, log *slog.Logger) *Applier {
	if log == nil {
		log = slog.Default()
	}
	return &Applier{st: st, rdb: rdb, log: log}
}

// ErrRefused is a feature event that is not applied: unknown feature,
// caller or object, or a wrong PIN. Nothing was changed.
var ErrRefused = errors.New("feature refused")

// IsFeatureEvent reports whether e is a feature-code event.
func IsFeatureEvent(e esl.Event) bool {
	return e.Name() == "CUSTOM" && e.Get("Event-Subclass") == esl.FeatureSubclass
}

// Apply applies one feature event once. A second delivery of the same
// event (same Core-UUID and Event-Sequence) does nothing.
func (a *Applier) Apply(ctx context.Context, e esl.Event) error {
	if !IsFeatureEvent(e) {
		return nil
	}
	feature, tenant, ext := e.Get("sb_feature"), e.Var("sb_tenant"), e.Var("sb_ext")
	if tenant == "" || ext == "" {
		return fmt.Errorf("%w: %s without a calling extension", ErrRefused, feature)
	}
	if first, err := a.once(ctx, e); err != nil || !first {
		return err
	}
	o, err := a.st.Tenant(ctx, tenant)
	if err != nil {
		if !errors.Is(err, models.ErrNotFound) {
			a.release(ctx, e)
		}
		return fmt.Errorf("feature %s: tenant %s: %w", feature, tenant, err)
	}
	f := call{a: a, o: o, ext: ext, arg: e.Get("sb_arg"), pin: e.Var("sb_pin"), pinAsked: e.Var("sb_pin") != ""}
	if !f.pinAsked {
		// A code that asks for a PIN is checked even when the caller
		// entered none (read leaves sb_pin empty).
		if f.pinAsked, err = a.pinRequired(ctx, o, feature); err != nil {
			a.release(ctx, e)
			return fmt.Errorf("feature %s: %w", feature, err)
		}
	}
	switch feature {
	case "dnd_toggle":
		err = f.extension(ctx, func(x models.Record) map[string]any { return map[string]any{"dnd": x["dnd"] != true} })
	case "forward_all_on":
		err = f.extension(ctx, func(models.Record) map[string]any {
			return map[string]any{"forward_all": map[string]any{"enabled": true, "destination": f.arg}}
		})
	case "forward_all_off":
		err = f.extension(ctx, func(x models.Record) map[string]any {
			fw, _ := x["forward_all"].(map[string]any)
			return map[string]any{"forward_all": map[string]any{"enabled": false, "destination": fw["destination"]}}
		})
	case "office_mode_toggle", "office_mode_day", "office_mode_night":
		err = f.officeMode(ctx, feature)
	case "agent_login_logout", "agent_pause_toggle":
		err = f.agent(ctx, feature)
	case "record_prompt":
		err = f.recordPrompt(ctx, e.Get("Unique-ID"), eventTime(e))
	default:
		// The rest (voicemail, pickup, echo...) change nothing.
		return nil
	}
	if err != nil {
		if !errors.Is(err, ErrRefused) {
			a.release(ctx, e) // not applied: a retry may claim it again
		}
		return fmt.Errorf("feature %s for %s@%s: %w", feature, ext, tenant, err)
	}
	a.log.Info("feature applied", "feature", feature, "tenant", tenant, "extension", ext)
	return nil
}

// pinRequired says whether the tenant's code for feature asks for a PIN.
func (a *Applier) pinRequired(ctx context.Context, o models.Owner, feature string) (bool, error) {
	recs, err := a.st.Records(ctx, a.st.Registry().Resource("feature_extensions"), o, map[string]any{"feature": feature})
	if err != nil {
		return false, err
	}
	return len(recs) > 0 && recs[0]["pin_required"] == true, nil
}

// once claims the event; false when it was already claimed. Without Redis
// (or when it fails) the event is applied: one replica reads a node's
// events at a time, so a duplicate needs a lease hand-over as well.
func (a *Applier) once(ctx context.Context, e esl.Event) (bool, error) {
	if a.rdb == nil {
		return true, nil
	}
	ok, err := a.rdb.SetNX(ctx, a.guardKey(e), e.Node, guardTTL).Result()
	if err != nil {
		a.log.Warn("feature once-guard unavailable", "error", err)
		return true, nil
	}
	return ok, nil
}

func (a *Applier) guardKey(e esl.Event) string {
	return keyprefix.OrDefault(a.KeyPrefix) + "feature:" + e.Get("Core-UUID") + ":" + e.Get("Event-Sequence")
}

func (a *Applier) release(ctx context.Context, e esl.Event) {
	if a.rdb != nil {
		a.rdb.Del(context.WithoutCancel(ctx), a.guardKey(e))
	}
}

// call is one feature event's caller and data.
type call struct {
	a             *Applier
	o             models.Owner
	ext, arg, pin string
	pinAsked      bool
}

func (f call) resource(name string) *models.Resource { return f.a.st.Registry().Resource(name) }

// extension applies a change to the caller's own extension. With a PIN
// read, it must be the extension's voicemail PIN.
func (f call) extension(ctx context.Context, patch func(models.Record) map[string]any) error {
	res := f.resource("extensions")
	recs, err := f.a.st.Records(ctx, res, f.o, map[string]any{"name": f.ext})
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		return ErrRefused
	}
	if f.pinAsked && recs[0]["voicemail_pin"] != f.pin {
		return fmt.Errorf("%w: wrong PIN", ErrRefused)
	}
	_, err = f.a.st.Update(ctx, res, f.o, f.ext, patch(recs[0]))
	return err
}

// officeMode forces day or night (toggle: the opposite of what routing
// uses now). allowed_extensions and toggle_pin apply.
func (f call) officeMode(ctx context.Context, feature string) error {
	res := f.resource("office_mode")
	recs, err := f.a.st.Records(ctx, res, f.o, nil)
	if err != nil {
		return err
	}
	var cur models.Record
	if len(recs) > 0 {
		cur = recs[0]
	}
	if allowed, _ := cur["allowed_extensions"].([]any); len(allowed) > 0 && !contains(allowed, f.ext) {
		return fmt.Errorf("%w: extension not allowed to change office mode", ErrRefused)
	}
	if pin, _ := cur["toggle_pin"].(string); pin != "" && pin != f.pin {
		return fmt.Errorf("%w: wrong PIN", ErrRefused)
	}
	mode := map[string]string{"office_mode_day": "day", "office_mode_night": "night"}[feature]
	if mode == "" {
		now, _ := cur["effective_mode"].(string)
		if now == "" {
			now, _ = cur["mode"].(string)
		}
		mode = "day"
		if now == "day" {
			mode = "night"
		}
	}
	_, err = f.a.st.Update(ctx, res, f.o, "", map[string]any{"mode": mode})
	return err
}

// agent logs the caller's agent in or out, or pauses and resumes it. The
// agent is the enabled one whose extension is the caller's; with a PIN
// read, it must be the agent's PIN.
func (f call) agent(ctx context.Context, feature string) error {
	res := f.resource("agents")
	recs, err := f.a.st.Records(ctx, res, f.o, map[string]any{"extension": f.ext, "enabled": true})
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		return fmt.Errorf("%w: no agent rings this extension", ErrRefused)
	}
	ag := recs[0]
	if f.pinAsked && ag["pin"] != f.pin {
		return fmt.Errorf("%w: wrong PIN", ErrRefused)
	}
	status, _ := ag["status"].(string)
	next := "available"
	switch {
	case feature == "agent_login_logout" && status != "logged_out":
		next = "logged_out"
	case feature == "agent_pause_toggle" && status == "logged_out":
		return fmt.Errorf("%w: agent is logged out", ErrRefused)
	case feature == "agent_pause_toggle" && status != "on_break":
		next = "on_break"
	}
	_, err = f.a.st.Update(ctx, res, f.o, fmt.Sprint(ag["id"]), map[string]any{"status": next, "break_reason": nil})
	return err
}

func contains(list []any, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// PhoneRecordingRel is where, below the media library, a node writes the
// prompt a caller records with *732 on call uuid: the directory of
// naming.PhoneRecordingDir (<media dir>/<tenant>/phone) and the call's
// ${uuid}.
func PhoneRecordingRel(tenant, uuid string) string {
	return filepath.Join(tenant, naming.PhoneRecordingKind, uuid+".wav")
}

// maxPhoneRecording is the largest recording taken: the voice prompt's
// upload limit (16 MiB decoded). The dialplan records at most 300 s at
// 16 kHz, 9.6 MB.
const maxPhoneRecording = 16 << 20

// recordPrompt turns the caller's *732 recording into a new voice prompt
// through the store (validation, the media library's conversion to the
// prompts' 16 kHz mono WAV, a change event), named after the extension and
// the time of the event, so a repeated event finds its prompt made. The
// node's recording is removed once it is a prompt (or refused). With a PIN
// read, it must be the extension's voicemail PIN.
func (f call) recordPrompt(ctx context.Context, uuid string, at time.Time) error {
	if f.a.MediaDir == "" {
		return fmt.Errorf("%w: no media library configured", ErrRefused)
	}
	if !validUUID(uuid) || !validPart(f.o.Tenant) {
		return fmt.Errorf("%w: call id %q", ErrRefused, uuid)
	}
	exts, err := f.a.st.Records(ctx, f.resource("extensions"), f.o, map[string]any{"name": f.ext})
	if err != nil {
		return err
	}
	path := filepath.Join(f.a.MediaDir, PhoneRecordingRel(f.o.Tenant, uuid))
	if len(exts) == 0 {
		os.Remove(path)
		return fmt.Errorf("%w: unknown extension", ErrRefused)
	}
	if f.pinAsked && exts[0]["voicemail_pin"] != f.pin {
		os.Remove(path)
		return fmt.Errorf("%w: wrong PIN", ErrRefused)
	}
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%w: no recording at %s", ErrRefused, path)
	case err != nil:
		return err
	case info.Size() > maxPhoneRecording:
		os.Remove(path)
		return fmt.Errorf("%w: recording of %d bytes is over the prompt limit", ErrRefused, info.Size())
	}
	audio, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	name := "Phone recording " + f.ext + " " + at.UTC().Format("2006-01-02 15:04:05")
	_, err = f.a.st.Create(ctx, f.resource("voice_prompts"), f.o, map[string]any{
		"name": name, "source": "phone", "audio_base64": base64.StdEncoding.EncodeToString(audio),
		"description": "Recorded by phone on extension " + f.ext + " (call " + uuid + ")",
	})
	var verr *models.ValidationError
	switch {
	case errors.Is(err, models.ErrConflict):
		// Made by an earlier delivery of this event.
	case errors.As(err, &verr):
		os.Remove(path)
		return fmt.Errorf("%w: %v", ErrRefused, err)
	case err != nil:
		return err // kept for a retry
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		f.a.log.Warn("feature: phone recording not removed", "path", path, "error", err)
	}
	return nil
}

// eventTime is when FreeSWITCH fired e (Event-Date-Timestamp, microseconds
// since the epoch), else now.
func eventTime(e esl.Event) time.Time {
	if us, err := strconv.ParseInt(e.Get("Event-Date-Timestamp"), 10, 64); err == nil && us > 0 {
		return time.UnixMicro(us)
	}
	return time.Now()
}

// validUUID accepts FreeSWITCH's call UUIDs: hex digits and '-'.
func validUUID(s string) bool {
	if len(s) < 8 || len(s) > 64 {
		return false
	}
	return strings.Trim(s, "0123456789abcdefABCDEF-") == ""
}

// validPart is a tenant name that is one safe path component.
func validPart(s string) bool {
	return s != "" && !strings.HasPrefix(s, ".") && !strings.ContainsAny(s, "/\\\x00")
}

// Run applies the feature events arriving on in, in arrival order, until
// ctx ends. A failed database write is tried again a few times before the
// event is dropped (the caller heard the confirmation tone: the log says
// what was lost).
func (a *Applier) Run(ctx context.Context, in <-chan esl.Event) {
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-in:
			for attempt := 1; ; attempt++ {
				err := a.Apply(ctx, e)
				if err == nil {
					break
				}
				if errors.Is(err, ErrRefused) || attempt == 3 || ctx.Err() != nil {
					a.log.Warn("feature code not applied", "node", e.Node, "error", err)
					break
				}
				select {
				case <-ctx.Done():
				case <-time.After(time.Duration(attempt) * 500 * time.Millisecond):
				}
			}
		}
	}
}

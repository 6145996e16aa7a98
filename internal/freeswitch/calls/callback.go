package calls

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/freeswitch/esl"
)

// Call states of a callback call, in the order a successful call goes
// through them; ended and failed are final.
const (
	CallQueued             = "queued"
	CallRingingOrigin      = "ringing_origin"
	CallOriginAnswered     = "origin_answered"
	CallRingingDestination = "ringing_destination"
	CallBridged            = "bridged"
	CallEnded              = "ended"
	CallFailed             = "failed"
)

// Which leg of a callback failed.
const (
	LegOrigin      = "origin"      // the caller's mobile (the loopback leg)
	LegDestination = "destination" // the number dialled once the mobile answered
)

// ChangeCall is the change-stream type of a callback call's new state.
const ChangeCall = "call.updated"

var callRank = map[string]int{
	CallQueued: 0, CallRingingOrigin: 1, CallOriginAnswered: 2, CallRingingDestination: 3,
	CallBridged: 4, CallEnded: 5, CallFailed: 5,
}

// Call is a callback call placed through the API, as GET
// /api/telephony/calls/<id> shows it. Its id is the Unique-ID of the
// origin leg (the originate's origination_uuid); every leg Switchboard
// starts carries it as the channel variable sb_call.
type Call struct {
	ID        string `json:"id"`
	Node      string `json:"node"`
	Tenant    string `json:"tenant"`
	Extension string `json:"extension"`
	From      string `json:"from"`
	To        string `json:"to"`
	State     string `json:"state"`
	// FailedLeg is origin or destination once the call failed;
	// HangupCause is FreeSWITCH's cause for it and Reason FreeSWITCH's
	// text when it refused the originate (e.g. "-ERR CALL_REJECTED").
	FailedLeg   string `json:"failed_leg,omitempty"`
	HangupCause string `json:"hangup_cause,omitempty"`
	Reason      string `json:"reason,omitempty"`
	// The channel ids (as in /api/telephony/channels) and Unique-IDs of
	// both legs, once known.
	OriginChannel      string    `json:"origin_channel"`
	OriginUUID         string    `json:"origin_uuid"`
	DestinationChannel string    `json:"destination_channel"`
	DestinationUUID    string    `json:"destination_uuid"`
	CreatedAt          time.Time `json:"created_at"`
	RingingOriginAt    time.Time `json:"ringing_origin_at,omitzero"`
	OriginAnsweredAt   time.Time `json:"origin_answered_at,omitzero"`
	RingingDestAt      time.Time `json:"ringing_destination_at,omitzero"`
	BridgedAt          time.Time `json:"bridged_at,omitzero"`
	EndedAt            time.Time `json:"ended_at,omitzero"`
	UpdatedAt          time.Time `json:"updated_at"`
	// loopUUID is the routed (-b) half of the origin leg.
	LoopUUID string `json:"-"`
}

// callTTL is how long a call stays readable after it was placed.
const callTTL = 24 * time.Hour

// ErrCallNotFound is returned for an unknown (or expired) call id.
var ErrCallNotFound = errors.New("calls: call not found")

func (t *Tracker) callKey(id string) string { return t.prefix + "call:" + id }

// callbacks is the per-replica memory of the legs of calls in progress
// whose events carry no sb_call (the destination leg), so they cost no
// Redis look-up. Guarded by mu.
type callbacks struct {
	mu   sync.Mutex
	legs map[string]string // node:uuid of origin or destination leg -> call id
}

// PlaceCall stores a new call in state queued, before the originate is sent.
func (t *Tracker) PlaceCall(ctx context.Context, c Call) error {
	now := t.opts.Now().UTC()
	c.State, c.CreatedAt, c.UpdatedAt = CallQueued, now, now
	if c.OriginUUID == "" {
		c.OriginUUID = c.ID
	}
	return t.saveCall(ctx, t.rdb, c, true)
}

// FailCall marks a call failed with reason when its originate could not
// even be sent (the node went away).
func (t *Tracker) FailCall(ctx context.Context, id, reason string) {
	err := t.updateCall(ctx, id, func(c *Call) bool {
		if !advance(c, CallFailed, t.opts.Now().UTC()) {
			return false
		}
		c.FailedLeg, c.Reason = LegOrigin, reason
		return true
	})
	if err != nil {
		t.opts.Logger.Warn("mark call failed", "call", id, "error", err)
	}
}

// Call returns the call with id.
func (t *Tracker) Call(ctx context.Context, id string) (Call, error) {
	raw, err := t.rdb.Get(ctx, t.callKey(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return Call{}, ErrCallNotFound
	}
	if err != nil {
		return Call{}, fmt.Errorf("get call %s: %w", id, err)
	}
	var c callRecord
	if err := json.Unmarshal(raw, &c); err != nil {
		return Call{}, fmt.Errorf("decode call %s: %w", id, err)
	}
	out := c.Call
	out.LoopUUID = c.Loop
	// Channel ids are the tracker's: fill those it knows by now.
	for _, leg := range []struct {
		uuid string
		id   *string
	}{{out.OriginUUID, &out.OriginChannel}, {out.DestinationUUID, &out.DestinationChannel}} {
		if leg.uuid != "" && *leg.id == "" {
			if ch, err := t.ByUUID(ctx, out.Node, leg.uuid); err == nil {
				*leg.id = ch.ID
			}
		}
	}
	return out, nil
}

// callRecord is the stored form: the public Call plus what routing the
// events needs.
type callRecord struct {
	Call
	Loop string `json:"loop_uuid,omitempty"`
}

func (t *Tracker) saveCall(ctx context.Context, cmd redis.Cmdable, c Call, publish bool) error {
	raw, err := json.Marshal(callRecord{Call: c, Loop: c.LoopUUID})
	if err != nil {
		return fmt.Errorf("encode call %s: %w", c.ID, err)
	}
	if err := cmd.Set(ctx, t.callKey(c.ID), raw, callTTL).Err(); err != nil {
		return fmt.Errorf("store call %s: %w", c.ID, err)
	}
	if publish {
		t.publishCall(ctx, c)
	}
	return nil
}

// publishCall announces a call's new state on the change stream, next to
// the channel changes (type call.updated).
func (t *Tracker) publishCall(ctx context.Context, c Call) {
	msg, err := json.Marshal(Change{Type: ChangeCall, Call: &c})
	if err != nil {
		return
	}
	err = t.addToStream(ctx, c.Tenant, msg)
	if err != nil {
		t.opts.Logger.Warn("publish call change", "call", c.ID, "error", err)
	}
}

// updateCall applies fn to the stored call atomically (optimistic
// transaction: the replica that placed the call and the one holding the
// node's events may both write it). fn returns false to leave it as is.
func (t *Tracker) updateCall(ctx context.Context, id string, fn func(*Call) bool) error {
	key := t.callKey(id)
	for range 10 {
		var changed *Call
		err := t.rdb.Watch(ctx, func(tx *redis.Tx) error {
			raw, err := tx.Get(ctx, key).Bytes()
			if errors.Is(err, redis.Nil) {
				return nil // unknown or expired: nothing to track
			}
			if err != nil {
				return err
			}
			var rec callRecord
			if err := json.Unmarshal(raw, &rec); err != nil {
				return err
			}
			c := rec.Call
			c.LoopUUID = rec.Loop
			if !fn(&c) {
				return nil
			}
			c.UpdatedAt = t.opts.Now().UTC()
			_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
				return t.saveCall(ctx, p, c, false)
			})
			if err == nil {
				changed = &c
			}
			return err
		}, key)
		if errors.Is(err, redis.TxFailedErr) {
			continue
		}
		if err != nil {
			return fmt.Errorf("update call %s: %w", id, err)
		}
		if changed != nil {
			t.publishCall(ctx, *changed)
		}
		return nil
	}
	return fmt.Errorf("update call %s: too much contention", id)
}

// advance moves c to state at time at if that is forward; final states
// never change.
func advance(c *Call, state string, at time.Time) bool {
	if c.State == CallEnded || c.State == CallFailed || callRank[state] <= callRank[c.State] {
		return false
	}
	c.State = state
	switch state {
	case CallRingingOrigin:
		c.RingingOriginAt = at
	case CallOriginAnswered:
		c.OriginAnsweredAt = at
	case CallRingingDestination:
		c.RingingDestAt = at
	case CallBridged:
		c.BridgedAt = at
	case CallEnded, CallFailed:
		c.EndedAt = at
	}
	return true
}

// sbCallArg finds sb_call in an originate's variable block, separated by
// commas or by the ; that command.VarBlock declares ({^^;a=1;sb_call=...}).
var sbCallArg = regexp.MustCompile(`(?:^|[{,;])sb_call=([0-9a-fA-F-]{36})(?:[,;}]|$)`)

// CallEvent follows a callback call through its node's events: the
// origin legs carry sb_call; the destination leg is the one whose
// Other-Leg-Unique-ID is the origin leg; a BACKGROUND_JOB whose originate
// carried sb_call and that FreeSWITCH answered -ERR fails the call with
// FreeSWITCH's text. Events of other channels cost nothing.
func (t *Tracker) CallEvent(ctx context.Context, e esl.Event) error {
	at := microTime(e.Get("Event-Date-Timestamp"), t.opts.Now()).UTC()
	if e.Name() == "BACKGROUND_JOB" {
		m := sbCallArg.FindStringSubmatch(e.Get("Job-Command-Arg"))
		body := strings.TrimSpace(e.Body)
		if m == nil || !strings.HasPrefix(body, "-") {
			return nil
		}
		return t.updateCall(ctx, m[1], func(c *Call) bool {
			changed := false
			if c.Reason == "" {
				c.Reason, changed = body, true
			}
			if !advance(c, CallFailed, at) {
				return changed
			}
			c.FailedLeg = LegOrigin
			if !c.OriginAnsweredAt.IsZero() {
				c.FailedLeg = LegDestination
			}
			c.HangupCause = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(body, "-ERR"), "-USAGE:"))
			return true
		})
	}
	name, uuid := e.Name(), e.Get("Unique-ID")
	key := e.Node + ":" + uuid
	if id := e.Var("sb_call"); id != "" {
		if name == "CHANNEL_HANGUP_COMPLETE" {
			defer t.calls.forget(key)
		} else {
			t.calls.remember(key, id)
		}
		return t.originEvent(ctx, id, e, name, uuid, at)
	}
	if name == "CHANNEL_CREATE" {
		other := e.Get("Other-Leg-Unique-ID")
		if id, ok := t.calls.lookup(e.Node + ":" + other); ok {
			t.calls.remember(key, id)
			return t.updateCall(ctx, id, func(c *Call) bool {
				// Only a leg the origin (-a) leg dials is the
				// destination; the -b leg dials the mobile.
				if other != c.OriginUUID || c.DestinationUUID != "" {
					return false
				}
				c.DestinationUUID = uuid
				advance(c, CallRingingDestination, at)
				return true
			})
		}
	}
	id, ok := t.calls.lookup(key)
	if !ok {
		return nil
	}
	if name == "CHANNEL_HANGUP_COMPLETE" {
		t.calls.forget(key)
		cause := firstNonEmpty(e.Get("Hangup-Cause"), e.Var("hangup_cause"))
		return t.updateCall(ctx, id, func(c *Call) bool {
			if uuid != c.DestinationUUID || c.State == CallBridged || c.State == CallEnded || c.State == CallFailed {
				return false
			}
			// The destination hung up before it was bridged: remembered
			// for when the origin leg ends.
			c.FailedLeg, c.HangupCause = LegDestination, cause
			return true
		})
	}
	return nil
}

// originEvent applies an event of an origin leg (-a or -b) of call id.
func (t *Tracker) originEvent(ctx context.Context, id string, e esl.Event, name, uuid string, at time.Time) error {
	return t.updateCall(ctx, id, func(c *Call) bool {
		changed := false
		if uuid != c.OriginUUID && c.LoopUUID == "" && c.OriginUUID != "" {
			c.LoopUUID, changed = uuid, true
		}
		isA := uuid == c.OriginUUID
		switch name {
		case "CHANNEL_ANSWER":
			if isA {
				return advance(c, CallOriginAnswered, at) || changed
			}
		case "CHANNEL_BRIDGE":
			if isA {
				if other := peerOf(e, uuid); other != "" && c.DestinationUUID == "" {
					c.DestinationUUID = other
				}
				return advance(c, CallBridged, at) || changed
			}
		case "CHANNEL_HANGUP_COMPLETE":
			cause := firstNonEmpty(e.Get("Hangup-Cause"), e.Var("hangup_cause"))
			if c.State == CallBridged {
				if isA {
					c.HangupCause = cause
					return advance(c, CallEnded, at)
				}
				return changed
			}
			if !advance(c, CallFailed, at) {
				return changed
			}
			if c.FailedLeg == "" {
				c.FailedLeg, c.HangupCause = LegOrigin, cause
				if !c.OriginAnsweredAt.IsZero() {
					c.FailedLeg = LegDestination
				}
			}
			return true
		}
		return advance(c, CallRingingOrigin, at) || changed
	})
}

func (cb *callbacks) remember(key, id string) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	if cb.legs == nil {
		cb.legs = map[string]string{}
	}
	if len(cb.legs) > 100000 { // leaked by lost hangups: start over
		cb.legs = map[string]string{}
	}
	cb.legs[key] = id
}

func (cb *callbacks) lookup(key string) (string, bool) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	id, ok := cb.legs[key]
	return id, ok
}

func (cb *callbacks) forget(key string) {
	cb.mu.Lock()
	defer cb.mu.Unlock()
	delete(cb.legs, key)
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if s != "" {
			return s
		}
	}
	return ""
}

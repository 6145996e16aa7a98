package webhooks

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard/switchboard/internal/changes"
)

// SystemEvents are the events system webhooks take (§1.11); every other
// event goes to tenant and platform webhooks.
var SystemEvents = []string{
	"server.down", "server.up", "esl.disconnected", "esl.connected",
	"trunk.registration_failed", "trunk.registration_recovered", "trunk.capacity_reached",
	"tenant.limit_reached", "api_key.created", "api_key.revoked",
	"administrator.login_failed", "import.completed", "import.failed", "webhook.auto_disabled",
}

// Event is what a webhook receives: the body is its JSON.
type Event struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Tenant    string          `json:"tenant"`
	CreatedAt string          `json:"created_at"`
	Data      json.RawMessage `json:"data"`
	// data is Data decoded, for filters.
	data map[string]any
	// subject orders deliveries: a call's channel id for call events.
	subject string
	// at is when the event happened (the change's commit time).
	at time.Time
}

// callEventAliases maps the field guide's names of call events to the
// events produced under another name: a webhook subscribed to
// call.created receives call.started (the same moment: the channel is
// known with its tenant).
var callEventAliases = map[string]string{"call.started": "call.created"}

// configChange is the data of config.changed and office_mode.changed.
type configChange struct {
	Resource string          `json:"resource"`
	Op       changes.Op      `json:"op"`
	Key      string          `json:"key"`
	Before   json.RawMessage `json:"before,omitempty"`
	After    json.RawMessage `json:"after,omitempty"`
}

// eventOf turns an outbox change into the event webhooks see. Its id is
// the outbox id: the same on every redelivery of the change, so receivers
// de-duplicate on X-Webhook-Id.
func eventOf(c changes.Change) (*Event, error) {
	ev := &Event{ID: "evt_" + strconv.FormatInt(c.ID, 10), Tenant: c.Tenant, CreatedAt: c.At.UTC().Format(time.RFC3339Nano), at: c.At}
	if c.Op == changes.Event {
		ev.Type, ev.Data = c.Resource, c.After
		if strings.HasPrefix(c.Resource, "call.") {
			ev.subject = c.Key
		}
	} else {
		ev.Type = "config.changed"
		if c.Resource == "office_mode" {
			ev.Type = "office_mode.changed"
		}
		b, err := json.Marshal(configChange{Resource: c.Resource, Op: c.Op, Key: c.Key, Before: c.Before, After: c.After})
		if err != nil {
			return nil, err
		}
		ev.Data = b
	}
	if len(ev.Data) == 0 {
		ev.Data = json.RawMessage("{}")
	}
	_ = json.Unmarshal(ev.Data, &ev.data) // filters only look at objects
	return ev, nil
}

// system reports whether the event is for system webhooks.
func (e *Event) system() bool { return slices.Contains(SystemEvents, e.Type) }

// body is the delivery body.
func (e *Event) body() ([]byte, error) { return json.Marshal(e) }

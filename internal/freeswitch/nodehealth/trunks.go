package nodehealth

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/freeswitch/esl"
	"github.com/switchboard/switchboard/internal/models"
)

// The system events of trunk registrations.
const (
	TrunkRegistrationFailed    = "trunk.registration_failed"
	TrunkRegistrationRecovered = "trunk.registration_recovered"
)

// gatewayFailing are the sofia gateway states (sofia_state_string) of a
// registration that did not succeed: FAILED (refused or unanswered),
// FAIL_WAIT (waiting to retry after a failure), TIMEOUT. REGED is a
// registration that holds. The others (TRYING, REGISTER, UNREGED, NOREG,
// EXPIRED, ...) are steps in between and change nothing.
var gatewayFailing = map[string]bool{"FAILED": true, "FAIL_WAIT": true, "TIMEOUT": true}

// IsGatewayState reports whether e is a sofia gateway state event.
func IsGatewayState(e esl.Event) bool {
	return e.Name() == "CUSTOM" && e.Get("Event-Subclass") == esl.GatewayStateSubclass
}

// GatewayState records a sofia::gateway_state event of a trunk: its
// registration from this node starting to fail, or registering again
// after failing, is a system event (once per change, whatever the retries
// in between). Gateways that are no trunk of ours are ignored.
func (w *Watcher) GatewayState(ctx context.Context, e esl.Event) {
	state := e.Get("State")
	failing := gatewayFailing[state]
	if !failing && state != "REGED" {
		return
	}
	gw := e.Get("Gateway")
	key := e.Node + "\x00" + gw
	w.mu.Lock()
	last, ok := w.trunks[key]
	w.mu.Unlock()
	if ok && last == failing {
		return
	}
	if err := w.recordTrunk(ctx, e, gw, failing); err != nil {
		w.log.Error("nodehealth: recording a trunk registration state failed", "node", e.Node, "trunk", gw, "error", err)
		return
	}
	w.mu.Lock()
	w.trunks[key] = failing
	w.mu.Unlock()
}

// trunkRef is what system events say of a trunk: its id and tenants.
type trunkRef struct {
	ID      int64
	Tenants []string
}

// lookupTrunk finds the trunk named name; nil when there is none.
func (w *Watcher) lookupTrunk(ctx context.Context, name string) (*trunkRef, error) {
	var row struct {
		ID      int64          `db:"id"`
		Tenants sql.NullString `db:"tenants"`
	}
	err := w.st.Querier().GetContext(ctx, &row, "SELECT id, tenants FROM sip_trunks WHERE name = ?", name)
	if errors.Is(err, models.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("trunk %s: %w", name, err)
	}
	ref := &trunkRef{ID: row.ID}
	if row.Tenants.Valid {
		_ = json.Unmarshal([]byte(row.Tenants.String), &ref.Tenants)
	}
	return ref, nil
}

func (w *Watcher) recordTrunk(ctx context.Context, e esl.Event, gw string, failing bool) error {
	trunk, err := w.lookupTrunk(ctx, gw)
	if trunk == nil || err != nil {
		return err
	}
	now := models.FormatTime(time.Now())
	if _, err := w.st.Querier().ExecContext(ctx, "INSERT INTO trunk_states (node, trunk, failed, changed_at) VALUES (?, ?, 0, ?)", e.Node, gw, now); err != nil &&
		!errors.Is(err, models.ErrConflict) {
		return fmt.Errorf("trunk %s state: %w", gw, err)
	}
	err = w.st.WithEvents(ctx, func(tx models.Querier) ([]changes.Change, error) {
		want, from := 0, 1
		typ := TrunkRegistrationRecovered
		if failing {
			want, from, typ = 1, 0, TrunkRegistrationFailed
		}
		res, err := tx.ExecContext(ctx, "UPDATE trunk_states SET failed = ?, changed_at = ? WHERE node = ? AND trunk = ? AND failed = ?", want, now, e.Node, gw, from)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return nil, nil
		}
		data := map[string]any{
			"trunk": gw, "trunk_id": trunk.ID, "tenants": trunk.Tenants, "node": e.Node, "state": e.Get("State"),
			"ping_status": e.Get("Ping-Status"), "at": now,
		}
		if st, err := strconv.Atoi(e.Get("Status")); err == nil {
			data["sip_status"] = st
		}
		if p := e.Get("Phrase"); p != "" {
			data["sip_phrase"] = p
		}
		ev, err := models.NewEvent(typ, "", gw, data)
		return []changes.Change{ev}, err
	})
	if err != nil {
		return fmt.Errorf("trunk %s state: %w", gw, err)
	}
	return nil
}

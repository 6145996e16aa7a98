// Package nodehealth turns what the ESL pool sees of each FreeSWITCH node
// into system events (resources.md §1.11):
//
//   - esl.connected / esl.disconnected: the node's event-socket connection
//     was established / lost (a state change, not every reconnect attempt;
//     the first connection of a node counts as connected).
//   - server.down: the connection has stayed lost for the grace period (the
//     socket unreachable, refusing us, or not answering the pool's
//     "api status" probe, which runs every few seconds).
//   - server.up: the node answers again after a server.down.
//   - trunk.registration_failed / trunk.registration_recovered: a trunk's
//     registration from a node starts failing / registers again after
//     failing (mod_sofia's sofia::gateway_state events, trunks.go).
//   - trunk.capacity_reached / tenant.limit_reached: a call takes the last
//     of a trunk's max_channels or of a tenant's max_concurrent_calls on a
//     node (mod_hash's limit::usage events), once a minute at most per
//     node and trunk or tenant (limits.go).
//
// The states live in the node_states table, shared by every replica: each
// change is a conditional UPDATE in the transaction that records its
// event in the outbox, so an occurrence is reported once however many
// replicas (or restarts) observe it, and the event is delivered at least
// once. Only the replica holding a node's event lease reports it.
package nodehealth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/models"
)

// The system events of nodes.
const (
	ESLConnected    = "esl.connected"
	ESLDisconnected = "esl.disconnected"
	ServerDown      = "server.down"
	ServerUp        = "server.up"
)

// DefaultGrace is how long a node's connection stays lost before the node
// is reported down: longer than a FreeSWITCH restart's usual gap, shorter
// than an operator would wait to hear of an outage.
const DefaultGrace = 30 * time.Second

// Watcher reports node state changes. Observe is called by the ESL pool
// (PoolOptions.OnNodeState); Stop ends the pending down checks.
type Watcher struct {
	st    *models.Store
	grace time.Duration
	log   *slog.Logger

	mu     sync.Mutex
	known  map[string]bool // the last state this replica reported per node
	timers map[string]*time.Timer
	trunks map[string]bool      // node\x00trunk: failing, as last recorded
	limits map[string]time.Time // node\x00realm\x00key: when last recorded
	ctx    context.Context
	cancel context.CancelFunc
}

// New returns a Watcher writing to st; grace <= 0 selects DefaultGrace.
func New(st *models.Store, grace time.Duration, log *slog.Logger) *Watcher {
	if grace <= 0 {
		grace = DefaultGrace
	}
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Watcher{st: st, grace: grace, log: log, known: map[string]bool{}, timers: map[string]*time.Timer{}, trunks: map[string]bool{}, limits: map[string]time.Time{}, ctx: ctx, cancel: cancel}
}

// Stop cancels the pending down checks (another replica, or this one after
// a restart, finishes them from the stored state).
func (w *Watcher) Stop() {
	w.cancel()
	w.mu.Lock()
	defer w.mu.Unlock()
	for n, t := range w.timers {
		t.Stop()
		delete(w.timers, n)
	}
}

// Observe records that node's event connection is up or down (cause: why
// it went down). Repeats of the state this replica last reported cost
// nothing: only changes reach the database.
func (w *Watcher) Observe(ctx context.Context, node string, up bool, cause error) {
	w.mu.Lock()
	if last, ok := w.known[node]; ok && last == up {
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	since, err := w.record(ctx, node, up, cause)
	if err != nil {
		w.log.Error("nodehealth: recording a node state failed", "node", node, "up", up, "error", err)
		return // not remembered: the next observation tries again
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.known[node] = up
	if t := w.timers[node]; t != nil {
		t.Stop()
		delete(w.timers, node)
	}
	if !up {
		wait := max(time.Until(since.Add(w.grace)), 0)
		w.timers[node] = time.AfterFunc(wait, func() { w.checkDown(node) })
	}
}

// Forget drops a node that left the configuration: its pending down check
// ends and a node of that name later starts afresh in this replica.
func (w *Watcher) Forget(node string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.known, node)
	if t := w.timers[node]; t != nil {
		t.Stop()
		delete(w.timers, node)
	}
}

// record stores the connection state and returns since when the node's
// connection has been in it.
func (w *Watcher) record(ctx context.Context, node string, up bool, cause error) (time.Time, error) {
	now := models.FormatTime(time.Now())
	if _, err := w.st.Querier().ExecContext(ctx, "INSERT INTO node_states (node) VALUES (?)", node); err != nil &&
		!errors.Is(err, models.ErrConflict) {
		return time.Time{}, fmt.Errorf("node %s state: %w", node, err)
	}
	state := boolInt(up)
	var since string
	err := w.st.WithEvents(ctx, func(tx models.Querier) ([]changes.Change, error) {
		var prevServer int
		if err := tx.GetContext(ctx, &prevServer, "SELECT server_up FROM node_states WHERE node = ?", node); err != nil {
			return nil, err
		}
		res, err := tx.ExecContext(ctx, "UPDATE node_states SET esl_up = ?, esl_changed_at = ? WHERE node = ? AND esl_up <> ?", state, now, node, state)
		if err != nil {
			return nil, err
		}
		var evs []changes.Change
		if n, _ := res.RowsAffected(); n == 1 {
			data := map[string]any{"node": node, "at": now}
			typ := ESLConnected
			if !up {
				typ = ESLDisconnected
				if cause != nil {
					data["error"] = cause.Error()
				}
			}
			ev, err := models.NewEvent(typ, "", node, data)
			if err != nil {
				return nil, err
			}
			evs = append(evs, ev)
		}
		if err := tx.GetContext(ctx, &since, "SELECT esl_changed_at FROM node_states WHERE node = ?", node); err != nil {
			return nil, err
		}
		if !up {
			return evs, nil
		}
		// Up: the node answers. It was down (server.up) or not known yet
		// (recorded as up, nothing to report).
		res, err = tx.ExecContext(ctx, "UPDATE node_states SET server_up = 1, server_changed_at = ? WHERE node = ? AND server_up <> 1", now, node)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 1 && prevServer == 0 {
			ev, err := models.NewEvent(ServerUp, "", node, map[string]any{"node": node, "at": now})
			if err != nil {
				return nil, err
			}
			evs = append(evs, ev)
		}
		return evs, nil
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("node %s state: %w", node, err)
	}
	t, err := time.Parse("2006-01-02T15:04:05.000000Z", since)
	if err != nil {
		t = time.Now()
	}
	return t, nil
}

// checkDown reports server.down when the node's connection is still lost
// a grace period after it was lost (by whichever replica saw it first).
func (w *Watcher) checkDown(node string) {
	ctx, cancel := context.WithTimeout(w.ctx, 10*time.Second)
	defer cancel()
	now := time.Now()
	stamp := models.FormatTime(now)
	cutoff := models.FormatTime(now.Add(-w.grace))
	err := w.st.WithEvents(ctx, func(tx models.Querier) ([]changes.Change, error) {
		var since string
		if err := tx.GetContext(ctx, &since, "SELECT esl_changed_at FROM node_states WHERE node = ? AND esl_up = 0", node); err != nil {
			return nil, nil // up again, or gone
		}
		res, err := tx.ExecContext(ctx, "UPDATE node_states SET server_up = 0, server_changed_at = ? WHERE node = ? AND esl_up = 0 AND server_up <> 0 AND esl_changed_at <= ?",
			stamp, node, cutoff)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return nil, nil
		}
		ev, err := models.NewEvent(ServerDown, "", node, map[string]any{
			"node": node, "at": stamp, "unreachable_since": since, "grace_seconds": int(w.grace / time.Second),
		})
		return []changes.Change{ev}, err
	})
	if err != nil && w.ctx.Err() == nil {
		w.log.Error("nodehealth: recording a node down failed", "node", node, "error", err)
	}
	w.mu.Lock()
	delete(w.timers, node)
	w.mu.Unlock()
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

package nodehealth

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/freeswitch/esl"
	"github.com/switchboard/switchboard/internal/models"
)

// The system events of limits the dialplan enforces on a node.
const (
	TrunkCapacityReached = "trunk.capacity_reached"
	TenantLimitReached   = "tenant.limit_reached"
)

// LimitQuiet is how long a (node, realm, key) stays quiet after it was
// reported at its maximum: a busy trunk filling up again with every call
// that ends and starts reports once a minute at most.
const LimitQuiet = time.Minute

// The mod_hash realms and keys the dialplan counts in (dialplan
// outbound.go): "limit_execute hash trunk <trunk> <max_channels> bridge
// ..." and "limit hash <tenant> outbound <max_concurrent_calls> ...".
const (
	trunkRealm  = "trunk"
	tenantCalls = "outbound"
)

// IsLimitUsage reports whether e is a limit::usage event.
func IsLimitUsage(e esl.Event) bool {
	return e.Name() == "CUSTOM" && e.Get("Event-Subclass") == esl.LimitUsageSubclass
}

// LimitUsage records a limit::usage event: FreeSWITCH fires one on every
// successful increment with the usage after it, and nothing for a call
// refused over the maximum, so the call that takes the last place carries
// usage == max. A trunk reaching its max_channels is
// trunk.capacity_reached, a tenant reaching its max_concurrent_calls is
// tenant.limit_reached, each at most once per LimitQuiet per node and
// resource across replicas (limit_alerts). Usage below the maximum, a
// counter without one, and realms that are no trunk or tenant of ours are
// ignored.
func (w *Watcher) LimitUsage(ctx context.Context, e esl.Event) {
	if e.Get("backend") != "hash" {
		return
	}
	realm, key := e.Get("realm"), e.Get("key")
	usage, err1 := strconv.Atoi(e.Get("usage"))
	maximum, err2 := strconv.Atoi(e.Get("max"))
	if err1 != nil || err2 != nil || maximum <= 0 || usage < maximum {
		return
	}
	if realm != trunkRealm && key != tenantCalls {
		return
	}
	id := e.Node + "\x00" + realm + "\x00" + key
	now := time.Now()
	w.mu.Lock()
	last, seen := w.limits[id]
	w.mu.Unlock()
	if seen && now.Sub(last) < LimitQuiet {
		return // reported from here within the minute: spare the database
	}
	var err error
	if realm == trunkRealm {
		err = w.recordTrunkCapacity(ctx, e.Node, key, usage, maximum, now)
	} else {
		err = w.recordTenantLimit(ctx, e.Node, realm, usage, maximum, now)
	}
	if err != nil {
		w.log.Error("nodehealth: recording a limit reached failed", "node", e.Node, "realm", realm, "key", key, "error", err)
		return
	}
	w.mu.Lock()
	w.limits[id] = now
	w.mu.Unlock()
}

func (w *Watcher) recordTrunkCapacity(ctx context.Context, node, name string, usage, maximum int, now time.Time) error {
	trunk, err := w.lookupTrunk(ctx, name)
	if trunk == nil || err != nil {
		return err
	}
	return w.recordLimit(ctx, node, trunkRealm, name, now, func(at string) (changes.Change, error) {
		return models.NewEvent(TrunkCapacityReached, "", name, map[string]any{
			"trunk": name, "trunk_id": trunk.ID, "tenants": trunk.Tenants, "max_channels": maximum, "usage": usage, "node": node, "at": at,
		})
	})
}

func (w *Watcher) recordTenantLimit(ctx context.Context, node, tenant string, usage, maximum int, now time.Time) error {
	var id int64
	err := w.st.Querier().GetContext(ctx, &id, "SELECT id FROM tenants WHERE tenant = ?", tenant)
	if errors.Is(err, models.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("tenant %s: %w", tenant, err)
	}
	return w.recordLimit(ctx, node, tenant, tenantCalls, now, func(at string) (changes.Change, error) {
		return models.NewEvent(TenantLimitReached, "", tenant, map[string]any{
			"tenant": tenant, "tenant_id": id, "limit": "max_concurrent_calls", "value": maximum, "usage": usage, "node": node, "at": at,
		})
	})
}

// recordLimit writes the event made by ev when (node, realm, key) was not
// reported within LimitQuiet: the conditional UPDATE of its limit_alerts
// row and the outbox insert share a transaction, so whichever replica (or
// restart) sees the usage first reports it, once.
func (w *Watcher) recordLimit(ctx context.Context, node, realm, key string, now time.Time, ev func(at string) (changes.Change, error)) error {
	if _, err := w.st.Querier().ExecContext(ctx, "INSERT INTO limit_alerts (node, realm, limit_key) VALUES (?, ?, ?)", node, realm, key); err != nil &&
		!errors.Is(err, models.ErrConflict) {
		return fmt.Errorf("limit %s/%s state: %w", realm, key, err)
	}
	at := models.FormatTime(now)
	cutoff := models.FormatTime(now.Add(-LimitQuiet))
	err := w.st.WithEvents(ctx, func(tx models.Querier) ([]changes.Change, error) {
		res, err := tx.ExecContext(ctx, "UPDATE limit_alerts SET reported_at = ? WHERE node = ? AND realm = ? AND limit_key = ? AND reported_at <= ?",
			at, node, realm, key, cutoff)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return nil, nil
		}
		e, err := ev(at)
		return []changes.Change{e}, err
	})
	if err != nil {
		return fmt.Errorf("limit %s/%s state: %w", realm, key, err)
	}
	return nil
}

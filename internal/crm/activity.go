package crm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/models"
)

// CallActivity logs ended calls on the timelines of the contacts whose
// numbers called or were called. It is an outbox subscriber to call.ended
// (recorded with the CDR), idempotent per (CDR, contact).
type CallActivity struct {
	st  *models.Store
	log *slog.Logger
}

// NewCallActivity builds the subscriber.
func NewCallActivity(st *models.Store, log *slog.Logger) *CallActivity {
	return &CallActivity{st: st, log: log}
}

var _ changes.EventSubscriber = (*CallActivity)(nil)

// Name is the outbox subscriber name.
func (a *CallActivity) Name() string { return "crm-call-activity" }

// WantsEvents asks for events (call.ended).
func (a *CallActivity) WantsEvents() bool { return true }

// Handle logs one ended call.
func (a *CallActivity) Handle(ctx context.Context, c changes.Change) error {
	if c.Op != changes.Event || c.Resource != "call.ended" || c.Tenant == "" {
		return nil
	}
	var cdr models.CDR
	if err := json.Unmarshal(c.After, &cdr); err != nil {
		a.log.Warn("crm: undecodable call.ended event skipped", "change", c.ID, "error", err)
		return nil
	}
	o, err := a.st.Tenant(ctx, c.Tenant)
	if errors.Is(err, models.ErrNotFound) {
		return nil // the tenant is gone, and its contacts with it
	}
	if err != nil {
		return err
	}
	tenant, err := a.st.Get(ctx, a.st.Registry().Resource("tenants"), models.Owner{}, c.Tenant)
	if err != nil {
		return err
	}
	country, _ := tenant["country"].(string)
	activities := a.st.Registry().Resource("activities")
	for _, side := range []struct {
		number, direction, subject string
	}{
		{cdr.CallerIDNumber, "inbound", "Call from %s"},
		{cdr.Destination, "outbound", "Call to %s"},
	} {
		e164, ok := Normalise(side.number, country)
		if !ok {
			continue
		}
		contacts, err := ContactsByNumber(ctx, a.st, o.TenantID, e164)
		if err != nil {
			return err
		}
		for _, ct := range contacts {
			if done, err := a.logged(ctx, o, cdr.ID, ct.ID); err != nil || done {
				if err != nil {
					return err
				}
				continue
			}
			in := map[string]any{
				"kind":             "call",
				"subject":          fmt.Sprintf(side.subject, e164),
				"occurred_at":      cdr.StartedAt.UTC().Format(time.RFC3339),
				"duration_seconds": json.Number(strconv.Itoa(cdr.Billsec)), // as the API decodes JSON
				"direction":        side.direction,
				"related":          map[string]any{"type": "contact", "id": json.Number(strconv.FormatInt(ct.ID, 10))},
				"cdr_id":           strconv.FormatInt(cdr.ID, 10),
				"body":             fmt.Sprintf("%s → %s, %s, %ds talking (%s)", cdr.CallerIDNumber, cdr.Destination, cdr.HangupCause, cdr.Billsec, cdr.ChannelID),
			}
			if cdr.Direction == "internal" {
				in["direction"] = "internal"
			}
			_, err := a.st.Create(ctx, activities, o, in)
			var invalid *models.ValidationError
			if errors.As(err, &invalid) {
				// Retrying cannot fix it: note it and go on.
				a.log.Warn("crm: call activity refused", "contact", ct.ID, "cdr", cdr.ID, "error", err)
				continue
			}
			if err != nil {
				return fmt.Errorf("crm: call activity for contact %d: %w", ct.ID, err)
			}
		}
	}
	return nil
}

// logged reports whether the CDR is on the contact's timeline already (a
// redelivered event).
func (a *CallActivity) logged(ctx context.Context, o models.Owner, cdrID, contactID int64) (bool, error) {
	var related []string
	err := a.st.Querier().SelectContext(ctx, &related, "SELECT COALESCE(related, '') FROM activities WHERE tenant_id = ? AND cdr_id = ?", o.TenantID, strconv.FormatInt(cdrID, 10))
	if err != nil {
		return false, fmt.Errorf("crm: activities of cdr %d: %w", cdrID, err)
	}
	for _, r := range related {
		var rel struct {
			Type string `json:"type"`
			ID   int64  `json:"id"`
		}
		if json.Unmarshal([]byte(r), &rel) == nil && rel.Type == "contact" && rel.ID == contactID {
			return true, nil
		}
	}
	return false, nil
}

package models

import (
	"context"
	"fmt"
	"time"
)

// DeviceByMAC finds a managed device by its MAC (12 lower-case hex digits,
// unique platform-wide) for the provisioning endpoint, with its secrets
// opened, and the tenant that owns it; ErrNotFound when no device of an
// enabled tenant has it.
func (s *Store) DeviceByMAC(ctx context.Context, mac string) (Owner, Record, error) {
	var o struct {
		ID     int64  `db:"id"`
		Tenant string `db:"tenant"`
	}
	err := s.db.GetContext(ctx, &o, "SELECT t.id, t.tenant FROM devices d JOIN tenants t ON t.id = d.tenant_id WHERE d.mac_address = ? AND t.enabled = ?", mac, true)
	if err != nil {
		return Owner{}, nil, fmt.Errorf("device %s: %w", mac, s.dialect.translate(err))
	}
	owner := Owner{TenantID: o.ID, Tenant: o.Tenant}
	recs, err := s.Records(ctx, devicesResource, owner, map[string]any{"mac_address": mac})
	if err != nil {
		return Owner{}, nil, err
	}
	if len(recs) == 0 { // deleted in between
		return Owner{}, nil, fmt.Errorf("device %s: %w", mac, ErrNotFound)
	}
	return owner, recs[0], nil
}

// NoteProvisioned records a device's last configuration download. It is
// telemetry, not configuration: no change event, no updated_at.
func (s *Store) NoteProvisioned(ctx context.Context, o Owner, id int64, at time.Time, ip, userAgent string) error {
	if len(userAgent) > 255 {
		userAgent = userAgent[:255]
	}
	_, err := s.db.ExecContext(ctx, "UPDATE devices SET last_provisioned_at = ?, last_provisioned_ip = ?, last_user_agent = ? WHERE tenant_id = ? AND id = ?",
		FormatTime(at), ip, userAgent, o.TenantID, id)
	if err != nil {
		return fmt.Errorf("note provisioning of device %d: %w", id, s.dialect.translate(err))
	}
	return nil
}

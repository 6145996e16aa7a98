package models

import (
	"context"
	"fmt"
	"time"
)

// FindPublic finds the tenant object whose field (a platform-wide unique
// column: a device's MAC, a widget's public id) has value, for endpoints
// that devices and visitors reach without naming a tenant. Secrets are
// opened as Records opens them; objects of disabled tenants are not found
// (ErrNotFound).
func (s *Store) FindPublic(ctx context.Context, res *Resource, field, value string) (Owner, Record, error) {
	if res.Scope != TenantScope || res.Field(field) == nil {
		return Owner{}, nil, fmt.Errorf("find %s by %s: not a field of a tenant resource", res.Name, field)
	}
	var o struct {
		ID     int64  `db:"id"`
		Tenant string `db:"tenant"`
	}
	err := s.db.GetContext(ctx, &o, "SELECT t.id, t.tenant FROM "+res.Table+" r JOIN tenants t ON t.id = r.tenant_id WHERE r."+field+" = ? AND t.enabled = ?", value, true)
	if err != nil {
		return Owner{}, nil, fmt.Errorf("%s %s: %w", res.Title, value, s.dialect.translate(err))
	}
	owner := Owner{TenantID: o.ID, Tenant: o.Tenant}
	recs, err := s.Records(ctx, res, owner, map[string]any{field: value})
	if err != nil {
		return Owner{}, nil, err
	}
	if len(recs) == 0 { // deleted in between
		return Owner{}, nil, fmt.Errorf("%s %s: %w", res.Title, value, ErrNotFound)
	}
	return owner, recs[0], nil
}

// DeviceByMAC finds a managed device by its MAC (12 lower-case hex digits,
// unique platform-wide) for the provisioning endpoint.
func (s *Store) DeviceByMAC(ctx context.Context, mac string) (Owner, Record, error) {
	return s.FindPublic(ctx, devicesResource, "mac_address", mac)
}

// NoteProvisioned records a device's last configuration download. It is
// telemetry, not configuration: no change event, no updated_at.
func (s *Store) NoteProvisioned(ctx context.Context, o Owner, id int64, at time.Time, ip, userAgent string) error {
	if r := []rune(userAgent); len(r) > 255 {
		userAgent = string(r[:255])
	}
	_, err := s.db.ExecContext(ctx, "UPDATE devices SET last_provisioned_at = ?, last_provisioned_ip = ?, last_user_agent = ? WHERE tenant_id = ? AND id = ?",
		FormatTime(at), ip, userAgent, o.TenantID, id)
	if err != nil {
		return fmt.Errorf("note provisioning of device %d: %w", id, s.dialect.translate(err))
	}
	return nil
}

package models

import (
	"context"
	"fmt"

	"github.com/switchboard/switchboard/internal/changes"
)

// SetDerived writes a read-only field that the server keeps (a
// music-on-hold class's files) and records the update like any write, so
// change subscribers act on it. Only id-keyed tenant resources.
func (s *Store) SetDerived(ctx context.Context, res *Resource, o Owner, id int64, field string, value any) error {
	f := res.Field(field)
	if f == nil || !f.ReadOnly || !f.Stored() || res.Scope != TenantScope || res.KeyField() != "id" {
		return fmt.Errorf("set %s.%s: not a stored read-only field of an id-keyed tenant resource", res.Name, field)
	}
	v, err := s.toColumn(f, value)
	if err != nil {
		return err
	}
	key := fmt.Sprint(id)
	return s.write(ctx, func(ts *txStore) error {
		before, err := s.getRow(ctx, ts.tx, res, o, key)
		if err != nil {
			return err
		}
		if _, err := ts.tx.ExecContext(ctx, "UPDATE "+res.Table+" SET "+field+" = ?, updated_at = ? WHERE tenant_id = ? AND id = ?", v, now(), o.TenantID, id); err != nil {
			return fmt.Errorf("set %s.%s: %w", res.Name, field, s.dialect.translate(err))
		}
		after, err := s.getRow(ctx, ts.tx, res, o, key)
		if err != nil {
			return err
		}
		return ts.record(res, o, changes.Update, changeKey(res, after), before, after)
	})
}

package models

import (
	"context"
	"errors"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// The tenant number plan: extensions, queues, IVR menus, routing conditions
// and every other dialable object share one space per tenant. The numbers
// table's unique key (tenant_id, number) is the single arbiter, so two
// concurrent creates can never both win.

func (s *Store) claimNumbers(ctx context.Context, tx *sqlx.Tx, res *Resource, o Owner, key string, old, patch Record) error {
	for _, f := range res.Fields {
		if !f.NumberPlan {
			continue
		}
		v, changed := patch[f.Name]
		if !changed {
			continue
		}
		if old != nil && old[f.Name] != nil {
			if _, err := tx.ExecContext(ctx, "DELETE FROM numbers WHERE tenant_id = ? AND number = ?", o.TenantID, old[f.Name]); err != nil {
				return fmt.Errorf("release number: %w", s.dialect.translate(err))
			}
		}
		if v == nil {
			continue
		}
		_, err := tx.ExecContext(ctx, "INSERT INTO numbers (tenant_id, number, resource, owner_key) VALUES (?, ?, ?, ?)", o.TenantID, v, res.Name, key)
		if err = s.dialect.translate(err); errors.Is(err, ErrConflict) {
			var owner struct {
				Resource string `db:"resource"`
				Key      string `db:"owner_key"`
			}
			if e := tx.GetContext(ctx, &owner, "SELECT resource, owner_key FROM numbers WHERE tenant_id = ? AND number = ?", o.TenantID, v); e == nil {
				return &ConflictError{Msg: fmt.Sprintf("number %v is already used by %s %s", v, owner.Resource, owner.Key)}
			}
		}
		if err != nil {
			return fmt.Errorf("claim number %v: %w", v, err)
		}
	}
	return nil
}

func (s *Store) releaseNumbers(ctx context.Context, tx *sqlx.Tx, res *Resource, o Owner, old Record) error {
	for _, f := range res.Fields {
		if f.NumberPlan && old[f.Name] != nil {
			if _, err := tx.ExecContext(ctx, "DELETE FROM numbers WHERE tenant_id = ? AND number = ?", o.TenantID, old[f.Name]); err != nil {
				return fmt.Errorf("release number: %w", s.dialect.translate(err))
			}
		}
	}
	return nil
}

package models

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/switchboard/switchboard/internal/changes"
)

// Admin is an administrator as authentication needs it.
type Admin struct {
	ID           int64          `db:"id"`
	Username     string         `db:"username"`
	PasswordHash string         `db:"password"`
	Role         string         `db:"role"`
	TenantsJSON  sql.NullString `db:"tenants"`
	Enabled      bool           `db:"enabled"`
	MFAEnabled   bool           `db:"mfa_enabled"`
	// MFASecret is the sealed TOTP secret, if one is enrolled.
	MFASecret sql.NullString `db:"mfa_secret"`
}

// Tenants returns the tenant names a scoped administrator may manage.
func (a *Admin) Tenants() []string {
	var t []string
	if a.TenantsJSON.Valid {
		_ = json.Unmarshal([]byte(a.TenantsJSON.String), &t)
	}
	return t
}

// AdminByUsername loads an enabled administrator.
func (s *Store) AdminByUsername(ctx context.Context, username string) (*Admin, error) {
	return s.adminWhere(ctx, "a.username = ?", username)
}

// AdminByID loads an enabled administrator by id (web sessions hold the
// id, so renaming an administrator keeps its sessions).
func (s *Store) AdminByID(ctx context.Context, id int64) (*Admin, error) {
	return s.adminWhere(ctx, "a.id = ?", id)
}

// adminWhere loads the one enabled administrator matching where;
// ErrNotFound for a missing or disabled one.
func (s *Store) adminWhere(ctx context.Context, where string, arg any) (*Admin, error) {
	var a Admin
	err := s.db.GetContext(ctx, &a, `SELECT a.id, a.username, a.password, a.role, a.tenants, a.enabled, a.mfa_enabled, m.secret AS mfa_secret
		FROM administrators a LEFT JOIN admin_mfa m ON m.admin_id = a.id WHERE `+where, arg)
	if err != nil {
		return nil, s.dialect.translate(err)
	}
	if !a.Enabled {
		return nil, ErrNotFound
	}
	return &a, nil
}

// SetAdmin creates a platform administrator or resets an existing one's
// password (the `switchboard admin create` command).
func (s *Store) SetAdmin(ctx context.Context, username, password string) (created bool, err error) {
	in := map[string]any{"username": username, "password": password, "role": "platform_admin"}
	if len(password) < 12 {
		return false, FieldError("password", "at least 12 characters")
	}
	_, err = s.Create(ctx, administratorsResource, Owner{}, in)
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, ErrConflict) {
		return false, err
	}
	hash, err := HashPassword(password)
	if err != nil {
		return false, err
	}
	return false, s.write(ctx, func(ts *txStore) error {
		var id int64
		if err := ts.tx.GetContext(ctx, &id, "SELECT id FROM administrators WHERE username = ?", username); err != nil {
			return fmt.Errorf("reset administrator %s: %w", username, s.dialect.translate(err))
		}
		key := strconv.FormatInt(id, 10)
		old, err := ts.getRow(ctx, ts.tx, administratorsResource, Owner{}, key)
		if err != nil {
			return err
		}
		if _, err := ts.tx.ExecContext(ctx, "UPDATE administrators SET password = ?, enabled = 1, updated_at = ? WHERE id = ?", hash, now(), id); err != nil {
			return fmt.Errorf("reset administrator %s: %w", username, s.dialect.translate(err))
		}
		out, err := ts.getRow(ctx, ts.tx, administratorsResource, Owner{}, key)
		if err != nil {
			return err
		}
		return ts.record(administratorsResource, Owner{}, changes.Update, key, old, out)
	})
}

package models

import (
	"context"
	"fmt"

	"github.com/jmoiron/sqlx"
)

// TOTP secrets of administrators: sealed with the server key like SIP
// secrets, readable only by authentication, shown once at enrolment.

// SetAdminMFASecret stores a newly enrolled TOTP secret (replacing any
// earlier one) and switches MFA on for the administrator.
func (s *Store) SetAdminMFASecret(ctx context.Context, adminID int64, secret string) error {
	sealed := s.sealer.Seal(secret)
	return s.inTx(ctx, func(tx *sqlx.Tx) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM admin_mfa WHERE admin_id = ?", adminID); err != nil {
			return fmt.Errorf("replace mfa secret: %w", s.dialect.translate(err))
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO admin_mfa (admin_id, secret, created_at) VALUES (?, ?, ?)", adminID, sealed, now()); err != nil {
			return fmt.Errorf("store mfa secret: %w", s.dialect.translate(err))
		}
		if _, err := tx.ExecContext(ctx, "UPDATE administrators SET mfa_enabled = 1, updated_at = ? WHERE id = ?", now(), adminID); err != nil {
			return fmt.Errorf("enable mfa: %w", s.dialect.translate(err))
		}
		return nil
	})
}

// AdminMFASecret opens an administrator's TOTP secret ("" when none is enrolled).
func (s *Store) AdminMFASecret(a *Admin) (string, error) {
	if !a.MFASecret.Valid {
		return "", nil
	}
	secret, err := s.sealer.Open(a.MFASecret.String)
	if err != nil {
		return "", fmt.Errorf("open mfa secret of %s: %w", a.Username, err)
	}
	return secret, nil
}

// adminHooks: switching MFA off forgets the enrolled authenticator, so
// switching it on again needs a new enrolment.
type adminHooks struct{}

var _ beforeSaver = adminHooks{}

func (adminHooks) beforeSave(ctx context.Context, ts *txStore, _ Owner, old, patch Record) error {
	if on, ok := patch["mfa_enabled"].(bool); ok && !on && old != nil {
		if _, err := ts.tx.ExecContext(ctx, "DELETE FROM admin_mfa WHERE admin_id = ?", old["id"]); err != nil {
			return fmt.Errorf("forget mfa secret: %w", ts.dialect.translate(err))
		}
	}
	return nil
}

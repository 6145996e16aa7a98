package models

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// WidgetSIPUser is the short-lived SIP user a webrtc click-to-call widget
// issues to one visitor's browser (table widget_sip_users). The directory
// knows it until ExpiresAt; its user_context can reach only the widget's
// destination (package fsxml).
type WidgetSIPUser struct {
	Username   string `db:"username"`    // the SIP user id, w<token>-<tenant>
	Tenant     string `db:"tenant"`      // the widget's tenant
	Widget     string `db:"widget"`      // the widget's public_id
	A1Hash     string `db:"a1_hash"`     // md5(user:domain:password); the password is not stored
	CallerName string `db:"caller_name"` // the visitor's name as given ("" when not asked)
	ExpiresAt  int64  `db:"expires_at"`  // Unix seconds
}

// IssueWidgetSIPUser stores u and deletes the users that expired before
// now: issuing is the only write to the table, so it also keeps it small.
func (s *Store) IssueWidgetSIPUser(ctx context.Context, u WidgetSIPUser, now time.Time) error {
	if _, err := s.db.ExecContext(ctx, "DELETE FROM widget_sip_users WHERE expires_at <= ?", now.Unix()); err != nil {
		return fmt.Errorf("delete expired widget SIP users: %w", s.dialect.translate(err))
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO widget_sip_users (username, tenant, widget, a1_hash, caller_name, expires_at)
		VALUES (?, ?, ?, ?, ?, ?)`, u.Username, u.Tenant, u.Widget, u.A1Hash, u.CallerName, u.ExpiresAt)
	if err != nil {
		return fmt.Errorf("issue widget SIP user: %w", s.dialect.translate(err))
	}
	return nil
}

// LiveWidgetSIPUser returns the widget SIP user named username that has
// not expired at now (ErrNotFound otherwise: an expired user is unknown
// whether or not its row was deleted yet).
func (s *Store) LiveWidgetSIPUser(ctx context.Context, username string, now time.Time) (WidgetSIPUser, error) {
	var u WidgetSIPUser
	err := s.db.GetContext(ctx, &u, `SELECT username, tenant, widget, a1_hash, caller_name, expires_at
		FROM widget_sip_users WHERE username = ? AND expires_at > ?`, username, now.Unix())
	if errors.Is(err, sql.ErrNoRows) {
		return u, ErrNotFound
	}
	if err != nil {
		return u, fmt.Errorf("widget SIP user: %w", s.dialect.translate(err))
	}
	return u, nil
}

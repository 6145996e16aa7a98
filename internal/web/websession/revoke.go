package websession

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/models"
)

// Admins loads administrators (models.Store).
type Admins interface {
	AdminByID(ctx context.Context, id int64) (*models.Admin, error)
}

// Revoker ends sessions whose administrator was deleted or disabled, whose
// password changed or whose MFA was switched on or off (a session signed in
// without a code must not outlive the switch), as those changes commit. (Requests also compare
// the password fingerprint and reload the administrator, so a session is
// refused at once; the revoker removes what is left in Redis.)
type Revoker struct {
	Sessions *Store
	Admins   Admins
}

var _ changes.Subscriber = Revoker{}

// Name is the subscriber's stable name.
func (Revoker) Name() string { return "web-sessions" }

// Handle revokes after administrator updates and deletes.
func (r Revoker) Handle(ctx context.Context, c changes.Change) error {
	if c.Resource != "administrators" || c.Op == changes.Create {
		return nil
	}
	id, err := strconv.ParseInt(c.Key, 10, 64)
	if err != nil {
		return nil // not an administrator id: nothing of ours
	}
	var keep func(*Session) bool
	if c.Op == changes.Update && !mfaSwitched(c) {
		adm, err := r.Admins.AdminByID(ctx, id)
		switch {
		case errors.Is(err, models.ErrNotFound): // deleted or disabled since
		case err != nil:
			return fmt.Errorf("web sessions: load administrator %d: %w", id, err)
		default:
			current := Fingerprint(adm.PasswordHash)
			keep = func(s *Session) bool { return s.Password == current }
		}
	}
	if _, err := r.Sessions.RevokeAdmin(ctx, id, keep); err != nil {
		return fmt.Errorf("web sessions: revoke administrator %d: %w", id, err)
	}
	return nil
}

// mfaSwitched reports whether an update changed mfa_enabled.
func mfaSwitched(c changes.Change) bool {
	var before, after struct {
		MFA *bool `json:"mfa_enabled"`
	}
	if json.Unmarshal(c.Before, &before) != nil || json.Unmarshal(c.After, &after) != nil {
		return false
	}
	return before.MFA != nil && after.MFA != nil && *before.MFA != *after.MFA
}

package models

import (
	"context"
	"crypto/subtle"
	"fmt"
	"strings"
)

// Chat accounts record which extensions have an account on the chat
// server. Only a hash of the password is kept (SHA-256 for a generated
// one, bcrypt for one a client chose: chatPasswordHash): the clear password
// is shown once, in the provisioning or rotate answer, and the chat server
// holds its own SCRAM form.

// ChatAccounts lists the extensions of a tenant that have a chat account.
func (s *Store) ChatAccounts(ctx context.Context, o Owner) ([]string, error) {
	var exts []string
	if err := s.db.SelectContext(ctx, &exts, "SELECT extension FROM chat_accounts WHERE tenant_id = ? ORDER BY extension", o.TenantID); err != nil {
		return nil, fmt.Errorf("chat accounts of %s: %w", o.Tenant, s.dialect.translate(err))
	}
	return exts, nil
}

// HasChatAccount reports whether the extension has a chat account.
func (s *Store) HasChatAccount(ctx context.Context, o Owner, ext string) (bool, error) {
	var n int
	if err := s.db.GetContext(ctx, &n, "SELECT COUNT(*) FROM chat_accounts WHERE tenant_id = ? AND extension = ?", o.TenantID, ext); err != nil {
		return false, fmt.Errorf("chat account %s: %w", ext, s.dialect.translate(err))
	}
	return n > 0, nil
}

// chatPasswordHash hashes a chat password: bcrypt for one a client chose,
// SHA-256 for one Switchboard generated (high entropy, like API keys, so
// a slow hash adds nothing but cost when provisioning agents in bulk).
func chatPasswordHash(password string, generated bool) (string, error) {
	if generated {
		return "sha256:" + HashKey(password), nil
	}
	return HashPassword(password)
}

// CreateChatAccount records a new account with the password's hash; an
// existing account answers ErrConflict.
func (s *Store) CreateChatAccount(ctx context.Context, o Owner, ext, password string, generated bool) error {
	hash, err := chatPasswordHash(password, generated)
	if err != nil {
		return err
	}
	ts := now()
	_, err = s.db.ExecContext(ctx, "INSERT INTO chat_accounts (tenant_id, extension, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?)", o.TenantID, ext, hash, ts, ts)
	if err != nil {
		return fmt.Errorf("create chat account %s: %w", ext, s.dialect.translate(err))
	}
	return nil
}

// SetChatPassword replaces the stored hash (rotation).
func (s *Store) SetChatPassword(ctx context.Context, o Owner, ext, password string, generated bool) error {
	hash, err := chatPasswordHash(password, generated)
	if err != nil {
		return err
	}
	r, err := s.db.ExecContext(ctx, "UPDATE chat_accounts SET password_hash = ?, updated_at = ? WHERE tenant_id = ? AND extension = ?", hash, now(), o.TenantID, ext)
	if err != nil {
		return fmt.Errorf("rotate chat password %s: %w", ext, s.dialect.translate(err))
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

// CheckChatPassword compares a password with the stored hash.
func (s *Store) CheckChatPassword(ctx context.Context, o Owner, ext, password string) (bool, error) {
	var hash string
	err := s.db.GetContext(ctx, &hash, "SELECT password_hash FROM chat_accounts WHERE tenant_id = ? AND extension = ?", o.TenantID, ext)
	if err != nil {
		return false, fmt.Errorf("chat account %s: %w", ext, s.dialect.translate(err))
	}
	if strings.HasPrefix(hash, "sha256:") {
		return subtle.ConstantTimeCompare([]byte(hash), []byte("sha256:"+HashKey(password))) == 1, nil
	}
	return CheckPassword(hash, password), nil
}

// DeleteChatAccount forgets an account (a provisioning that the chat
// server refused is undone this way).
func (s *Store) DeleteChatAccount(ctx context.Context, o Owner, ext string) error {
	if _, err := s.db.ExecContext(ctx, "DELETE FROM chat_accounts WHERE tenant_id = ? AND extension = ?", o.TenantID, ext); err != nil {
		return fmt.Errorf("delete chat account %s: %w", ext, s.dialect.translate(err))
	}
	return nil
}

// SetChatMUCDomain tells the store the chat room service, so chat
// channels carry their room JID ("" when no chat server is configured).
func (s *Store) SetChatMUCDomain(domain string) { s.chatMUC = domain }

// ChatRoomLocal is the room name of a tenant's channel on the chat server:
// <tenant>-<channel>, lower case (tenant names never contain "-").
func ChatRoomLocal(tenant, channel string) string {
	return strings.ToLower(tenant + "-" + channel)
}

// SetChannelJID records the room JID of a channel once its room exists
// (channels created before a chat server was configured get it here).
func (s *Store) SetChannelJID(ctx context.Context, o Owner, channel, jid string) error {
	if _, err := s.db.ExecContext(ctx, "UPDATE chat_channels SET jid = ? WHERE tenant_id = ? AND name = ? AND (jid IS NULL OR jid <> ?)", jid, o.TenantID, channel, jid); err != nil {
		return fmt.Errorf("channel %s jid: %w", channel, s.dialect.translate(err))
	}
	return nil
}

// ChatChannelExists reports whether the tenant has a channel of that name.
func (s *Store) ChatChannelExists(ctx context.Context, o Owner, channel string) (bool, error) {
	var n int
	if err := s.db.GetContext(ctx, &n, "SELECT COUNT(*) FROM chat_channels WHERE tenant_id = ? AND name = ?", o.TenantID, channel); err != nil {
		return false, fmt.Errorf("channel %s: %w", channel, s.dialect.translate(err))
	}
	return n > 0, nil
}

// chatChannelHooks fill the room JID of a new channel.
type chatChannelHooks struct{}

var _ beforeSaver = chatChannelHooks{}

func (chatChannelHooks) beforeSave(_ context.Context, ts *txStore, o Owner, old, patch Record) error {
	if old == nil && ts.chatMUC != "" {
		patch["jid"] = ChatRoomLocal(o.Tenant, str(patch["name"])) + "@" + ts.chatMUC
	}
	return nil
}

package models

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/switchboard/switchboard/internal/changes"
)

// APIKey is a stored key (never its value).
type APIKey struct {
	ID          int64          `db:"id" json:"id"`
	Name        string         `db:"name" json:"name"`
	Tenant      sql.NullString `db:"tenant" json:"-"`
	Extension   sql.NullString `db:"extension" json:"-"`
	Permissions string         `db:"permissions" json:"-"`
	KeyHash     string         `db:"key_hash" json:"-"`
	KeyPrefix   string         `db:"key_prefix" json:"key_prefix"`
	ExpiresAt   sql.NullString `db:"expires_at" json:"-"`
	LastUsedAt  sql.NullString `db:"last_used_at" json:"-"`
	RevokedAt   sql.NullString `db:"revoked_at" json:"-"`
	CreatedBy   string         `db:"created_by" json:"created_by"`
	CreatedAt   string         `db:"created_at" json:"created_at"`
}

// Grants returns the key's permissions.
func (k *APIKey) Grants() []string {
	var p []string
	_ = json.Unmarshal([]byte(k.Permissions), &p)
	return p
}

// Public is the key as the API shows it.
func (k *APIKey) Public() Record {
	return Record{
		"id": k.ID, "name": k.Name, "tenant": nullable(k.Tenant), "extension": nullable(k.Extension),
		"permissions": k.Grants(), "key_prefix": k.KeyPrefix, "expires_at": nullable(k.ExpiresAt),
		"last_used_at": nullable(k.LastUsedAt), "revoked_at": nullable(k.RevokedAt),
		"created_by": k.CreatedBy, "created_at": k.CreatedAt,
	}
}

func nullable(n sql.NullString) any {
	if n.Valid {
		return n.String
	}
	return nil
}

const keyColumns = "id, name, tenant, extension, permissions, key_hash, key_prefix, expires_at, last_used_at, revoked_at, created_by, created_at"

// CreateKey validates input, stores the key's hash and returns the key
// with its value, which is never readable again.
func (s *Store) CreateKey(ctx context.Context, input map[string]any, createdBy string) (Record, error) {
	rec, err := Validate(apiKeysResource, input, Create)
	if err != nil {
		return nil, err
	}
	tenant, _ := rec["tenant"].(string)
	ext, _ := rec["extension"].(string)
	if ext != "" && tenant == "" {
		return nil, FieldError("extension", "requires tenant")
	}
	perms, _ := rec["permissions"].([]any)
	if perms == nil {
		perms = []any{}
	}
	if exp, _ := rec["expires_at"].(string); exp != "" {
		t, err := time.Parse(time.RFC3339, exp)
		if err != nil {
			return nil, FieldError("expires_at", "must be RFC 3339")
		}
		rec["expires_at"] = FormatTime(t)
	}
	value := NewAPIKeyValue()
	var id int64
	err = s.write(ctx, func(wtx *txStore) error {
		tx := wtx.tx
		var tenantID any
		if tenant != "" {
			o, err := s.tenantOwner(ctx, tx, tenant)
			if err != nil {
				return FieldError("tenant", "tenant %q does not exist", tenant)
			}
			tenant, tenantID = o.Tenant, o.TenantID
			if ext != "" {
				var n int
				if err := tx.GetContext(ctx, &n, "SELECT COUNT(*) FROM extensions WHERE tenant_id = ? AND name = ?", o.TenantID, ext); err != nil {
					return fmt.Errorf("check extension: %w", s.dialect.translate(err))
				}
				if n == 0 {
					return FieldError("extension", "extension %s does not exist in tenant %s", ext, tenant)
				}
			}
		}
		pj, _ := json.Marshal(perms)
		ts := now()
		r, err := tx.ExecContext(ctx, `INSERT INTO api_keys (name, tenant, tenant_id, extension, permissions, key_hash, key_prefix, expires_at, created_by, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			rec["name"], nullIfEmpty(tenant), tenantID, nullIfEmpty(ext), string(pj), HashKey(value), value[:8], rec["expires_at"], createdBy, ts, ts)
		if err != nil {
			return fmt.Errorf("create key: %w", s.dialect.translate(err))
		}
		if id, err = r.LastInsertId(); err != nil {
			return err
		}
		return wtx.recordKey(ctx, changes.Create, id, nil)
	})
	if err != nil {
		return nil, err
	}
	k, err := s.keyByID(ctx, id)
	if err != nil {
		return nil, err
	}
	out := k.Public()
	out["key"] = value
	return out, nil
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func (s *Store) keyByID(ctx context.Context, id int64) (*APIKey, error) {
	var k APIKey
	if err := s.db.GetContext(ctx, &k, "SELECT "+keyColumns+" FROM api_keys WHERE id = ?", id); err != nil {
		return nil, fmt.Errorf("key %d: %w", id, s.dialect.translate(err))
	}
	return &k, nil
}

// ListKeys lists keys (tenant "" = all keys) without their values.
func (s *Store) ListKeys(ctx context.Context, tenant string, p Page) ([]Record, int, error) {
	where, args := "1=1", []any{}
	if tenant != "" {
		where, args = "tenant = ?", []any{tenant}
	}
	return s.listKeys(ctx, where, args, "id", p)
}

// RecentKeys lists every tenant's keys for a page that shows a few: the
// live ones first, newest first, then the revoked ones (a listing in id
// order would leave the newest out once there are more than limit).
func (s *Store) RecentKeys(ctx context.Context, limit int) ([]Record, int, error) {
	return s.listKeys(ctx, "1=1", nil, "(revoked_at IS NULL) DESC, id DESC", Page{Limit: limit})
}

func (s *Store) listKeys(ctx context.Context, where string, args []any, order string, p Page) ([]Record, int, error) {
	var total int
	if err := s.db.GetContext(ctx, &total, "SELECT COUNT(*) FROM api_keys WHERE "+where, args...); err != nil {
		return nil, 0, fmt.Errorf("count keys: %w", s.dialect.translate(err))
	}
	var keys []APIKey
	if err := s.db.SelectContext(ctx, &keys, "SELECT "+keyColumns+" FROM api_keys WHERE "+where+" ORDER BY "+order+" LIMIT ? OFFSET ?", append(args, p.Limit, p.Offset)...); err != nil {
		return nil, 0, fmt.Errorf("list keys: %w", s.dialect.translate(err))
	}
	out := make([]Record, len(keys))
	for i := range keys {
		out[i] = keys[i].Public()
	}
	return out, total, nil
}

// RevokeKey marks a key revoked (the row stays for audit). tenant, when
// set, limits revocation to that tenant's keys.
func (s *Store) RevokeKey(ctx context.Context, idStr, tenant string) error {
	id, err := strconv.ParseInt(idStr, 10, 64)
	if err != nil {
		return ErrNotFound
	}
	k, err := s.keyByID(ctx, id)
	if err != nil {
		return err
	}
	if tenant != "" && (!k.Tenant.Valid || k.Tenant.String != tenant) {
		return ErrNotFound
	}
	if k.RevokedAt.Valid {
		return nil
	}
	return s.write(ctx, func(tx *txStore) error {
		ts := now()
		if _, err := tx.tx.ExecContext(ctx, "UPDATE api_keys SET revoked_at = ?, updated_at = ? WHERE id = ? AND revoked_at IS NULL", ts, ts, id); err != nil {
			return fmt.Errorf("revoke key %d: %w", id, s.dialect.translate(err))
		}
		return tx.recordKey(ctx, changes.Update, id, k)
	})
}

// recordKey records a change of API key id (its value never appears: only
// its hash is stored, and Public leaves that out). The change carries the
// key's tenant, so tenant subscribers see their keys' changes.
func (ts *txStore) recordKey(ctx context.Context, op changes.Op, id int64, before *APIKey) error {
	var k APIKey
	if err := ts.tx.GetContext(ctx, &k, "SELECT "+keyColumns+" FROM api_keys WHERE id = ?", id); err != nil {
		return fmt.Errorf("key %d: %w", id, ts.dialect.translate(err))
	}
	var old Record
	if before != nil {
		old = before.Public()
	}
	if err := ts.record(apiKeysResource, Owner{}, op, strconv.FormatInt(id, 10), old, k.Public()); err != nil {
		return err
	}
	ts.changes[len(ts.changes)-1].Tenant = k.Tenant.String
	switch {
	case op == changes.Create:
		return ts.keyEvent(KeyCreatedEvent, &k, "")
	case k.RevokedAt.Valid && (before == nil || !before.RevokedAt.Valid):
		return ts.keyEvent(KeyRevokedEvent, &k, "revoked through the API")
	}
	return nil
}

// The system events of API keys (system webhooks, §1.11).
const (
	KeyCreatedEvent = "api_key.created"
	KeyRevokedEvent = "api_key.revoked"
)

// keyEvent records a system event about key k in the transaction that
// creates or revokes it. Its data is what the API shows of a key (never
// its value nor its hash), plus why a revoked key was revoked.
func (ts *txStore) keyEvent(typ string, k *APIKey, reason string) error {
	data := k.Public()
	if reason != "" {
		data["reason"] = reason
	}
	ev, err := NewEvent(typ, "", strconv.FormatInt(k.ID, 10), data)
	if err != nil {
		return err
	}
	ts.changes = append(ts.changes, ev)
	return nil
}

// revokeExtensionKeys revokes the user keys bound to an extension, in the
// transaction that deletes or renames it, so a key never outlives its
// extension or acts as a later extension of the same number.
func (ts *txStore) revokeExtensionKeys(ctx context.Context, o Owner, ext string) error {
	t := now()
	var keys []APIKey
	if err := ts.tx.SelectContext(ctx, &keys, "SELECT "+keyColumns+" FROM api_keys WHERE tenant_id = ? AND extension = ? AND revoked_at IS NULL",
		o.TenantID, ext); err != nil {
		return fmt.Errorf("keys of extension %s: %w", ext, ts.dialect.translate(err))
	}
	if len(keys) == 0 {
		return nil
	}
	if _, err := ts.tx.ExecContext(ctx, "UPDATE api_keys SET revoked_at = ?, updated_at = ? WHERE tenant_id = ? AND extension = ? AND revoked_at IS NULL",
		t, t, o.TenantID, ext); err != nil {
		return fmt.Errorf("revoke keys of extension %s: %w", ext, ts.dialect.translate(err))
	}
	for i := range keys {
		keys[i].RevokedAt = sql.NullString{String: t, Valid: true}
		if err := ts.keyEvent(KeyRevokedEvent, &keys[i], "extension "+ext+" deleted or renamed"); err != nil {
			return err
		}
	}
	return nil
}

// KeyByValue finds the active key with this value. Revoked and expired
// keys are ErrNotFound. The lookup is by hash through a unique index; the
// final comparison is constant-time.
func (s *Store) KeyByValue(ctx context.Context, value string) (*APIKey, error) {
	h := HashKey(value)
	var k APIKey
	if err := s.db.GetContext(ctx, &k, "SELECT "+keyColumns+" FROM api_keys WHERE key_hash = ?", h); err != nil {
		return nil, s.dialect.translate(err)
	}
	if subtle.ConstantTimeCompare([]byte(k.KeyHash), []byte(h)) != 1 || k.RevokedAt.Valid {
		return nil, ErrNotFound
	}
	if k.ExpiresAt.Valid && k.ExpiresAt.String <= now() {
		return nil, ErrNotFound
	}
	return &k, nil
}

// TouchKey records use of a key, at most once a minute per key so that
// authentication does not turn every request into a write.
func (s *Store) TouchKey(ctx context.Context, k *APIKey) {
	t := time.Now()
	if k.LastUsedAt.Valid {
		if last, err := time.Parse(timeLayout, k.LastUsedAt.String); err == nil && t.Sub(last) < time.Minute {
			return
		}
	}
	_, _ = s.db.ExecContext(ctx, "UPDATE api_keys SET last_used_at = ? WHERE id = ?", FormatTime(t), k.ID)
}

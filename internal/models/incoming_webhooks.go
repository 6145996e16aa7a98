package models

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strconv"

	"github.com/switchboard/switchboard/internal/platform/avatar"
)

// Incoming webhooks (resources.md §3.4, §6): the token in the URL is 32
// random bytes, kept only as its SHA-256 (a Digest secret), so a post is
// matched by the digest of the token it carries and a database dump holds
// no usable URL.

// newWebhookToken is 32 random bytes, URL-safe.
func newWebhookToken() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// webhookPath is where a token's posts go, under the base URL.
const webhookPath = "/integration/webhooks/"

// webhookDisplayURL is what reads show: the URL with only the token's first
// characters, enough to tell webhooks apart.
func (s *Store) webhookDisplayURL(token string) string {
	return s.baseURL + webhookPath + token[:6] + "…"
}

// SetBaseURL tells the store the public base URL (webhook URLs).
func (s *Store) SetBaseURL(u string) { s.baseURL = u }

type actorKey struct{}

// WithActor records who is writing, for created_by fields.
func WithActor(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, actorKey{}, name)
}

func actor(ctx context.Context) string {
	s, _ := ctx.Value(actorKey{}).(string)
	return s
}

// revealer adds what only the create answer may show (a full secret URL).
type revealer interface {
	reveal(s *Store, input, out Record)
}

var (
	_ revealer    = incomingWebhookRules{}
	_ beforeSaver = incomingWebhookRules{}
)

func (incomingWebhookRules) reveal(s *Store, input, out Record) {
	if tok, ok := input["token"].(string); ok {
		out["url"] = s.baseURL + webhookPath + tok
	}
}

// WebhookByToken finds the incoming webhook a token belongs to, and its
// tenant; an unknown token is ErrNotFound.
func (s *Store) WebhookByToken(ctx context.Context, token string) (Owner, Record, error) {
	var rows []struct {
		ID       int64  `db:"id"`
		TenantID int64  `db:"tenant_id"`
		Tenant   string `db:"tenant"`
	}
	err := s.db.SelectContext(ctx, &rows, "SELECT w.id, w.tenant_id, t.tenant FROM incoming_webhooks w JOIN tenants t ON t.id = w.tenant_id WHERE w.token = ?", HashKey(token))
	if err != nil {
		return Owner{}, nil, fmt.Errorf("webhook by token: %w", s.dialect.translate(err))
	}
	if len(rows) == 0 {
		return Owner{}, nil, ErrNotFound
	}
	o := Owner{TenantID: rows[0].TenantID, Tenant: rows[0].Tenant}
	rec, err := s.Get(ctx, incomingWebhooksResource, o, strconv.FormatInt(rows[0].ID, 10))
	return o, rec, err
}

// RegenerateWebhookToken gives a webhook a new token (the old one stops
// matching at once) and returns the object with the full new URL and token.
func (s *Store) RegenerateWebhookToken(ctx context.Context, o Owner, id string) (Record, error) {
	arg, err := keyArg(incomingWebhooksResource, id)
	if err != nil {
		return nil, err
	}
	tok := newWebhookToken()
	r, err := s.db.ExecContext(ctx, "UPDATE incoming_webhooks SET token = ?, url = ?, updated_at = ? WHERE tenant_id = ? AND id = ?",
		HashKey(tok), s.webhookDisplayURL(tok), now(), o.TenantID, arg)
	if err != nil {
		return nil, fmt.Errorf("regenerate webhook %s: %w", id, s.dialect.translate(err))
	}
	if n, _ := r.RowsAffected(); n == 0 {
		return nil, ErrNotFound
	}
	rec, err := s.Get(ctx, incomingWebhooksResource, o, id)
	if err != nil {
		return nil, err
	}
	rec["token"] = tok
	rec["url"] = s.baseURL + webhookPath + tok
	return rec, nil
}

// WebhookUsed counts a delivered post.
func (s *Store) WebhookUsed(ctx context.Context, o Owner, id int64) error {
	if _, err := s.db.ExecContext(ctx, "UPDATE incoming_webhooks SET message_count = COALESCE(message_count, 0) + 1, last_used_at = ? WHERE tenant_id = ? AND id = ?", now(), o.TenantID, id); err != nil {
		return fmt.Errorf("webhook %d used: %w", id, s.dialect.translate(err))
	}
	return nil
}

// storeOutputter is an outputter that needs the store (its base URL).
type storeOutputter interface {
	outputStore(s *Store, rec Record)
}

var _ storeOutputter = incomingWebhookRules{}

// outputStore shows a stored picture as the URL Switchboard serves it at.
func (incomingWebhookRules) outputStore(s *Store, rec Record) {
	if pic, ok := rec["picture"].(string); ok && pic != "" {
		rec["picture"] = s.WebhookPictureURL(rec["id"], pic)
	}
}

// WebhookPicturePath is where a webhook's picture is served, under the
// base URL; the content hash makes the URL change with the picture and
// keeps it from being guessed from the id alone.
const WebhookPicturePath = "/chat/avatars/webhooks/"

// WebhookPictureURL is the public URL of a webhook's stored picture.
func (s *Store) WebhookPictureURL(id any, stored string) string {
	return fmt.Sprintf("%s%s%v/%s.png", s.baseURL, WebhookPicturePath, id, avatar.Hash(stored))
}

// WebhookPicture returns the PNG of webhook id's picture when hash names
// its current content; anything else is ErrNotFound.
func (s *Store) WebhookPicture(ctx context.Context, id int64, hash string) ([]byte, error) {
	var pics []string
	if err := s.db.SelectContext(ctx, &pics, s.db.Rebind("SELECT picture FROM incoming_webhooks WHERE id = ? AND picture IS NOT NULL AND picture <> ''"), id); err != nil {
		return nil, fmt.Errorf("webhook picture: %w", s.dialect.translate(err))
	}
	if len(pics) == 0 || avatar.Hash(pics[0]) != hash {
		return nil, ErrNotFound
	}
	return avatar.PNG(pics[0])
}

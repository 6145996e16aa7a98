package messaging

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/models"
)

// Message statuses. Outbound messages move forward only, by rank; inbound
// messages are "received".
const (
	StatusQueued      = "queued"
	StatusSent        = "sent"
	StatusDelivered   = "delivered"
	StatusUndelivered = "undelivered"
	StatusFailed      = "failed"
	StatusRead        = "read"
	StatusReceived    = "received"
)

// statusRank orders statuses: a report may only move a message to a
// higher rank, so a late "sent" never overwrites "delivered". The final
// outcomes share a rank: the first one reported stands.
var statusRank = map[string]int{
	StatusQueued: 0, StatusSent: 1, StatusDelivered: 2, StatusUndelivered: 2, StatusFailed: 2, StatusRead: 3, StatusReceived: 0,
}

// Statuses lists every status (for filters and the API schema).
var Statuses = []string{StatusQueued, StatusSent, StatusDelivered, StatusUndelivered, StatusFailed, StatusRead, StatusReceived}

// Message is one message as the API shows it.
type Message struct {
	ID                int64    `db:"id" json:"id"`
	TenantID          int64    `db:"tenant_id" json:"-"`
	Tenant            string   `db:"tenant" json:"tenant"`
	ChannelID         int64    `db:"channel_id" json:"channel_id"`
	Direction         string   `db:"direction" json:"direction"`
	To                string   `db:"to_number" json:"to"`
	From              string   `db:"from_number" json:"from"`
	Body              string   `db:"body" json:"body"`
	TemplateID        string   `db:"template_id" json:"template_id,omitempty"`
	VariablesJSON     string   `db:"variables" json:"-"`
	Variables         []string `db:"-" json:"variables,omitempty"`
	ContactID         *int64   `db:"contact_id" json:"contact_id,omitempty"`
	Encoding          string   `db:"encoding" json:"encoding,omitempty"`
	Segments          int      `db:"segments" json:"segments,omitempty"`
	Status            string   `db:"status" json:"status"`
	StatusRank        int      `db:"status_rank" json:"-"`
	ProviderMessageID string   `db:"provider_message_id" json:"provider_message_id,omitempty"`
	ErrorCode         string   `db:"error_code" json:"error_code,omitempty"`
	ErrorMessage      string   `db:"error_message" json:"error_message,omitempty"`
	Attempts          int      `db:"attempts" json:"attempts"`
	CreatedAtS        string   `db:"created_at" json:"created_at"`
	UpdatedAtS        string   `db:"updated_at" json:"updated_at"`
	SentAtS           *string  `db:"sent_at" json:"sent_at,omitempty"`
	DeliveredAtS      *string  `db:"delivered_at" json:"delivered_at,omitempty"`
}

// messageSelect reads messages with their tenant's name.
const messageSelect = "SELECT m.id, m.tenant_id, COALESCE(t.tenant, '') AS tenant, m.channel_id, m.direction, m.to_number, m.from_number, m.body, m.template_id, m.variables, m.contact_id, m.encoding, m.segments, m.status, m.status_rank, m.provider_message_id, m.error_code, m.error_message, m.attempts, m.created_at, m.updated_at, m.sent_at, m.delivered_at FROM messages m LEFT JOIN tenants t ON t.id = m.tenant_id"

func (m *Message) decode() {
	if m.VariablesJSON != "" && m.VariablesJSON != "[]" {
		_ = json.Unmarshal([]byte(m.VariablesJSON), &m.Variables)
	}
}

// db is the messaging tables' access, over the store's pool.
type db struct {
	x      models.Querier
	sqlite bool
	// st records the events (message.received, message.status) with the
	// writes they report.
	st *models.Store
	// group is the outbox group rows are queued in and claimed from.
	group string
}

func (d *db) q(query string) string { return d.x.Rebind(query) }

// inTx runs fn in one of the store's transactions.
func (d *db) inTx(ctx context.Context, fn func(tx models.Querier) error) error {
	return d.st.InTx(ctx, fn)
}

func stamp(t time.Time) string { return models.FormatTime(t) }

// insertOutbound writes a queued message and its outbox row in one
// transaction: the send is accepted exactly when both are committed.
func (d *db) insertOutbound(ctx context.Context, m *Message) error {
	now := stamp(time.Now())
	vars, _ := json.Marshal(m.Variables)
	if m.Variables == nil {
		vars = []byte("[]")
	}
	return d.inTx(ctx, func(tx models.Querier) error {
		res, err := tx.ExecContext(ctx, d.q(`INSERT INTO messages (tenant_id, channel_id, direction, to_number, from_number, body, template_id, variables, contact_id, encoding, segments, status, status_rank, created_at, updated_at)
			VALUES (?, ?, 'outbound', ?, ?, ?, ?, ?, ?, ?, ?, 'queued', 0, ?, ?)`),
			m.TenantID, m.ChannelID, m.To, m.From, m.Body, m.TemplateID, string(vars), m.ContactID, m.Encoding, m.Segments, now, now)
		if err != nil {
			return fmt.Errorf("insert message: %w", err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return fmt.Errorf("insert message id: %w", err)
		}
		if _, err := tx.ExecContext(ctx, d.q(`INSERT INTO messaging_outbox (message_id, channel_id, next_attempt_at, out_group) VALUES (?, ?, ?, ?)`), id, m.ChannelID, now, d.group); err != nil {
			return fmt.Errorf("insert outbox row: %w", err)
		}
		m.ID, m.Status, m.CreatedAtS, m.UpdatedAtS = id, StatusQueued, now, now
		return nil
	})
}

// insertInbound stores a received message and its message.received event
// in one transaction; queued adds its outbox row too, so its delivery to
// the channel's destination survives a restart and is retried through an
// outage of the destination.
func (d *db) insertInbound(ctx context.Context, tenant string, m *Message, queued bool) error {
	return d.st.WithEvents(ctx, func(tx models.Querier) ([]changes.Change, error) {
		if err := d.insertInboundTx(ctx, tx, m); err != nil {
			return nil, err
		}
		m.Tenant = tenant
		if queued {
			if _, err := tx.ExecContext(ctx, d.q(`INSERT INTO messaging_outbox (message_id, channel_id, next_attempt_at, out_group) VALUES (?, ?, ?, ?)`), m.ID, m.ChannelID, m.CreatedAtS, d.group); err != nil {
				return nil, fmt.Errorf("insert inbound outbox row: %w", err)
			}
		}
		ev, err := models.NewEvent("message.received", tenant, strconv.FormatInt(m.ID, 10), m)
		return []changes.Change{ev}, err
	})
}

func (d *db) insertInboundTx(ctx context.Context, x models.Querier, m *Message) error {
	now := stamp(time.Now())
	res, err := x.ExecContext(ctx, d.q(`INSERT INTO messages (tenant_id, channel_id, direction, to_number, from_number, body, variables, status, status_rank, provider_message_id, created_at, updated_at)
		VALUES (?, ?, 'inbound', ?, ?, ?, '[]', 'received', 0, ?, ?, ?)`),
		m.TenantID, m.ChannelID, m.To, m.From, m.Body, m.ProviderMessageID, now, now)
	if err != nil {
		return fmt.Errorf("insert inbound message: %w", err)
	}
	m.ID, _ = res.LastInsertId()
	m.Status, m.Direction, m.CreatedAtS, m.UpdatedAtS = StatusReceived, "inbound", now, now
	return nil
}

// seenInbound reports whether a provider's inbound message id is stored
// already (providers redeliver webhooks).
func (d *db) seenInbound(ctx context.Context, channelID int64, providerID string) (bool, error) {
	if providerID == "" {
		return false, nil
	}
	var n int
	err := d.x.GetContext(ctx, &n, d.q(`SELECT COUNT(*) FROM messages WHERE channel_id = ? AND provider_message_id = ? AND direction = 'inbound'`), channelID, providerID)
	return n > 0, err
}

// lastInbound is when number last wrote to the channel (zero: never).
func (d *db) lastInbound(ctx context.Context, channelID int64, number string) (time.Time, error) {
	var at sql.NullString
	err := d.x.GetContext(ctx, &at, d.q(`SELECT MAX(created_at) FROM messages WHERE channel_id = ? AND direction = 'inbound' AND from_number = ?`), channelID, number)
	if err != nil || !at.Valid {
		return time.Time{}, err
	}
	t, _ := time.Parse("2006-01-02T15:04:05.000000Z", at.String)
	return t, nil
}

// applyStatus moves a message to status if that is forward, with a
// message.status event; it reports whether anything changed.
func (d *db) applyStatus(ctx context.Context, tenant string, channelID, messageID int64, status, code, msg string) (bool, error) {
	rank := statusRank[status]
	now := stamp(time.Now())
	sets := "status = ?, status_rank = ?, updated_at = ?"
	args := []any{status, rank, now}
	switch status {
	case StatusSent:
		sets += ", sent_at = COALESCE(sent_at, ?)"
		args = append(args, now)
	case StatusDelivered, StatusRead:
		sets += ", delivered_at = COALESCE(delivered_at, ?)"
		args = append(args, now)
	}
	if code != "" || msg != "" {
		sets += ", error_code = ?, error_message = ?"
		args = append(args, truncate(code, 64), truncate(msg, 500))
	}
	changed := false
	err := d.st.WithEvents(ctx, func(tx models.Querier) ([]changes.Change, error) {
		res, err := tx.ExecContext(ctx, d.q(`UPDATE messages SET `+sets+` WHERE id = ? AND channel_id = ? AND direction = 'outbound' AND status_rank < ?`),
			append(args, messageID, channelID, rank)...)
		if err != nil {
			return nil, err
		}
		n, _ := res.RowsAffected()
		if changed = n > 0; !changed {
			return nil, nil
		}
		ev, err := models.NewEvent("message.status", tenant, strconv.FormatInt(messageID, 10), map[string]any{
			"message_id": messageID, "channel_id": channelID, "status": status, "error_code": code, "error_message": msg,
		})
		return []changes.Change{ev}, err
	})
	if err != nil {
		return false, fmt.Errorf("apply status %s to message %d: %w", status, messageID, err)
	}
	return changed, nil
}

// messageByProviderID finds an outbound message of a channel.
func (d *db) messageByProviderID(ctx context.Context, channelID int64, providerID string) (int64, error) {
	var id int64
	err := d.x.GetContext(ctx, &id, d.q(`SELECT id FROM messages WHERE channel_id = ? AND provider_message_id = ? AND direction = 'outbound'`), channelID, providerID)
	return id, err
}

// Filter selects messages for a list.
type Filter struct {
	TenantID   int64 // 0 with AllTenants: every tenant
	AllTenants bool
	ChannelID  int64
	Status     string
	Direction  string
	From, To   time.Time
	Limit      int
	Offset     int
}

func (d *db) list(ctx context.Context, f Filter) ([]Message, int, error) {
	where, args := []string{"1 = 1"}, []any{}
	if !f.AllTenants {
		where, args = append(where, "m.tenant_id = ?"), append(args, f.TenantID)
	}
	if f.ChannelID != 0 {
		where, args = append(where, "m.channel_id = ?"), append(args, f.ChannelID)
	}
	if f.Status != "" {
		where, args = append(where, "m.status = ?"), append(args, f.Status)
	}
	if f.Direction != "" {
		where, args = append(where, "m.direction = ?"), append(args, f.Direction)
	}
	if !f.From.IsZero() {
		where, args = append(where, "m.created_at >= ?"), append(args, stamp(f.From))
	}
	if !f.To.IsZero() {
		where, args = append(where, "m.created_at < ?"), append(args, stamp(f.To))
	}
	cond := strings.Join(where, " AND ")
	var total int
	if err := d.x.GetContext(ctx, &total, d.q("SELECT COUNT(*) FROM messages m WHERE "+cond), args...); err != nil {
		return nil, 0, fmt.Errorf("count messages: %w", err)
	}
	out := []Message{}
	if err := d.x.SelectContext(ctx, &out, d.q(messageSelect+" WHERE "+cond+" ORDER BY m.id DESC LIMIT ? OFFSET ?"), append(args, f.Limit, f.Offset)...); err != nil {
		return nil, 0, fmt.Errorf("list messages: %w", err)
	}
	for i := range out {
		out[i].decode()
	}
	return out, total, nil
}

func (d *db) get(ctx context.Context, id int64) (*Message, error) {
	var m Message
	err := d.x.GetContext(ctx, &m, d.q(messageSelect+" WHERE m.id = ?"), id)
	if errors.Is(err, models.ErrNotFound) {
		return nil, models.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get message %d: %w", id, err)
	}
	m.decode()
	return &m, nil
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n])
	}
	return s
}

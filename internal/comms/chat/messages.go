package chat

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/switchboard/switchboard/internal/models"
)

// Namespaces of the message extensions Switchboard adds.
const (
	nsNick = "http://jabber.org/protocol/nick" // XEP-0172: the sender's display name
	nsJSON = "urn:xmpp:json:0"                 // XEP-0335: a JSON payload
	nsHTML = "http://jabber.org/protocol/xhtml-im"
	// nsAvatar carries the URL of a webhook's picture with its messages.
	nsAvatar  = "urn:switchboard:avatar:0"
	nsSID     = "urn:xmpp:sid:0"     // XEP-0359: the sender's stable message id
	nsStyling = "urn:xmpp:styling:0" // XEP-0393: <unstyled/> turns styling off
)

// ChannelMessage is one post into a room (through Queue).
type ChannelMessage struct {
	Room     string // room local part
	Body     string // plain-text body every client shows
	FromName string // display name shown as the sender ("" = none)
	JSON     bool   // Body is a JSON document (also carried as XEP-0335)
	// HTML is an optional XHTML-IM rendering (already well-formed XHTML
	// body content, escaped by the caller).
	HTML string
	// Avatar is the URL of the sender's picture (webhooks), carried as
	// <avatar xmlns="urn:switchboard:avatar:0" url="…"/>: XMPP has no
	// per-message avatar, so bots and custom clients read it there.
	Avatar string
	// Unstyled marks the body as literal text (XEP-0393's <unstyled/>
	// hint): a webhook's mrkdwn false, so *stars* stay stars.
	Unstyled bool
	// ID is the stanza id; "" = a new random one. A stable id lets clients
	// recognise a message delivered twice (at-least-once delivery).
	ID string
}

// renderStanza is the groupchat stanza of m and its id (m.ID, or a new
// random one). The id is also given as the XEP-0359 origin-id, which
// clients use to recognise a message they have already shown.
func renderStanza(m ChannelMessage) (id, stanza string) {
	id = m.ID
	if id == "" {
		id = uuid.NewString()
	}
	var b bytes.Buffer
	b.WriteString(`<message type="groupchat" id="`)
	escape(&b, id)
	b.WriteString(`">`)
	b.WriteString("<body>")
	escape(&b, m.Body)
	b.WriteString("</body>")
	if m.FromName != "" {
		fmt.Fprintf(&b, `<nick xmlns="%s">`, nsNick)
		escape(&b, m.FromName)
		b.WriteString("</nick>")
	}
	if m.JSON {
		fmt.Fprintf(&b, `<json xmlns="%s">`, nsJSON)
		escape(&b, m.Body)
		b.WriteString("</json>")
	}
	if m.Avatar != "" {
		fmt.Fprintf(&b, `<avatar xmlns="%s" url="`, nsAvatar)
		escape(&b, m.Avatar)
		b.WriteString(`"/>`)
	}
	if m.Unstyled {
		fmt.Fprintf(&b, `<unstyled xmlns="%s"/>`, nsStyling)
	}
	if m.HTML != "" {
		fmt.Fprintf(&b, `<html xmlns="%s"><body xmlns="http://www.w3.org/1999/xhtml">%s</body></html>`, nsHTML, m.HTML)
	}
	fmt.Fprintf(&b, `<origin-id xmlns="%s" id="`, nsSID)
	escape(&b, id)
	b.WriteString(`"/></message>`)
	return id, b.String()
}

// SendDirect sends a one-to-one chat message between two accounts (local
// parts). ejabberd stores it offline when the recipient is not connected
// and archives it for both users.
func (c *Client) SendDirect(ctx context.Context, fromLocal, toLocal, body string) error {
	return c.SendMessage(ctx, "chat", c.UserJID(fromLocal), c.UserJID(toLocal), body)
}

func escape(b *bytes.Buffer, s string) {
	_ = xml.EscapeText(b, []byte(s))
}

// Refusals of PostToChannel that will not change by retrying.
var (
	ErrNoChannel = errors.New("no such chat channel")
	ErrArchived  = errors.New("chat channel is archived")
)

// PostToChannel queues m for a tenant's channel named channel, after
// checking (in the insert, as EnqueueIn) that the channel exists in that
// tenant and is not archived: the path of integrations that post on their
// own (inbound SMS and WhatsApp). It goes through the queue like every
// other post, so the room's posts keep one order and one poster, which
// the sender names rely on (sender.go).
func (q *Queue) PostToChannel(ctx context.Context, tenant, channel string, m ChannelMessage) error {
	o, err := q.st.Tenant(ctx, tenant)
	if errors.Is(err, models.ErrNotFound) {
		return fmt.Errorf("tenant %s: %w", tenant, ErrNoChannel)
	}
	if err != nil {
		return err
	}
	m.Room = RoomLocal(o.Tenant, channel)
	_, ok, err := q.EnqueueIn(ctx, o.TenantID, m, Event{Tenant: o.Tenant, Channel: channel, FromName: m.FromName, Body: m.Body})
	if err != nil || ok {
		return err
	}
	exists, err := q.st.ChatChannelExists(ctx, o, channel)
	switch {
	case err != nil:
		return err
	case !exists:
		return fmt.Errorf("%s in tenant %s: %w", channel, tenant, ErrNoChannel)
	}
	return fmt.Errorf("%s in tenant %s: %w", channel, tenant, ErrArchived)
}

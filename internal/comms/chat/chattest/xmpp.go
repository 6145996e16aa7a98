package chattest

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"strings"
	"sync"
	"time"

	"mellium.im/sasl"
	"mellium.im/xmlstream"
	"mellium.im/xmpp"
	"mellium.im/xmpp/jid"
	"mellium.im/xmpp/stanza"
	"mellium.im/xmpp/websocket"
)

// Client is a real XMPP client session (mellium) over WebSocket that
// records every message and presence stanza it receives as XML text.
type Client struct {
	Session *xmpp.Session
	mu      sync.Mutex
	msgs    []string
	pres    []string
	served  chan error
}

// Login authenticates with SCRAM over the WebSocket URL and binds a
// resource; it returns the SASL failure when the password is wrong.
func Login(ctx context.Context, wsURL, bareJID, password string) (*Client, error) {
	addr, err := jid.Parse(bareJID)
	if err != nil {
		return nil, err
	}
	conn, err := websocket.DialDirect(ctx, "http://localhost/", wsURL)
	if err != nil {
		return nil, fmt.Errorf("websocket dial: %w", err)
	}
	// The test server listens on loopback without TLS (ws://); mellium
	// only authenticates on a secure stream, so loopback is declared one.
	features := []xmpp.StreamFeature{xmpp.SASL("", password, sasl.ScramSha256, sasl.ScramSha1), xmpp.BindResource()}
	neg := websocket.Negotiator(func(*xmpp.Session, *xmpp.StreamConfig) xmpp.StreamConfig {
		return xmpp.StreamConfig{Features: features}
	})
	sess, err := xmpp.NewSession(ctx, addr.Domain(), addr, conn, xmpp.Secure, neg)
	if err != nil {
		conn.Close()
		return nil, err
	}
	c := &Client{Session: sess, served: make(chan error, 1)}
	go func() {
		c.served <- sess.Serve(xmpp.HandlerFunc(func(t xmlstream.TokenReadEncoder, start *xml.StartElement) error {
			if start.Name.Local != "message" && start.Name.Local != "presence" {
				return nil
			}
			text := serialize(xmlstream.MultiReader(xmlstream.Token(*start), t, xmlstream.Token(start.End())))
			c.mu.Lock()
			if start.Name.Local == "message" {
				c.msgs = append(c.msgs, text)
			} else {
				c.pres = append(c.pres, text)
			}
			c.mu.Unlock()
			return nil
		}))
	}()
	return c, nil
}

// Close ends the session.
func (c *Client) Close() { _ = c.Session.Close() }

// Available sends initial presence, which makes ejabberd deliver offline
// messages.
func (c *Client) Available(ctx context.Context) error {
	return c.Session.Send(ctx, stanza.Presence{Type: stanza.AvailablePresence}.Wrap(nil))
}

// Messages returns the XML of every message received so far.
func (c *Client) Messages() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.msgs...)
}

// Join enters a room (bare JID) as an occupant under nick, asking for no
// history, and waits for the room's presence for the new occupant
// itself (status 110), or for its refusal, which it returns as an error.
func (c *Client) Join(ctx context.Context, room, nick string, timeout time.Duration) error {
	to, err := jid.Parse(room + "/" + nick)
	if err != nil {
		return err
	}
	x := xmlstream.Wrap(
		xmlstream.Wrap(nil, xml.StartElement{Name: xml.Name{Local: "history"}, Attr: []xml.Attr{{Name: xml.Name{Local: "maxstanzas"}, Value: "0"}}}),
		xml.StartElement{Name: xml.Name{Space: "http://jabber.org/protocol/muc", Local: "x"}})
	if err := c.Session.Send(ctx, stanza.Presence{To: to}.Wrap(x)); err != nil {
		return fmt.Errorf("join %s: %w", to, err)
	}
	from := `from="` + to.String() + `"`
	p, ok := waitFor(timeout, c.Presences, func(p string) bool {
		return strings.Contains(p, from) && (strings.Contains(p, `code="110"`) || strings.Contains(p, `type="error"`))
	})
	switch {
	case !ok:
		return fmt.Errorf("join %s: no answer within %s", to, timeout)
	case strings.Contains(p, `type="error"`):
		return fmt.Errorf("join %s refused: %s", to, p)
	}
	return nil
}

// Presences returns the XML of every presence received so far.
func (c *Client) Presences() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.pres...)
}

// WaitMessage waits until a received message contains every fragment.
func (c *Client) WaitMessage(timeout time.Duration, fragments ...string) (string, bool) {
	return waitFor(timeout, c.Messages, func(m string) bool {
		for _, f := range fragments {
			if !strings.Contains(m, f) {
				return false
			}
		}
		return true
	})
}

// waitFor waits until one of the stanzas list returns satisfies match.
func waitFor(timeout time.Duration, list func() []string, match func(string) bool) (string, bool) {
	deadline := time.Now().Add(timeout)
	for {
		for _, m := range list() {
			if match(m) {
				return m, true
			}
		}
		if time.Now().After(deadline) {
			return "", false
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Archive queries the message archive (XEP-0313) of to ("" = the user's
// own archive, or a room JID) and returns the archived messages' XML.
func (c *Client) Archive(ctx context.Context, to string) ([]string, error) {
	qid := fmt.Sprintf("q%d", time.Now().UnixNano())
	iq := stanza.IQ{Type: stanza.SetIQ}
	if to != "" {
		j, err := jid.Parse(to)
		if err != nil {
			return nil, err
		}
		iq.To = j
	}
	payload := xmlstream.Wrap(nil, xml.StartElement{
		Name: xml.Name{Space: "urn:xmpp:mam:2", Local: "query"},
		Attr: []xml.Attr{{Name: xml.Name{Local: "queryid"}, Value: qid}},
	})
	resp, err := c.Session.SendIQElement(ctx, payload, iq)
	if err != nil {
		return nil, fmt.Errorf("mam query: %w", err)
	}
	answer := serialize(resp)
	resp.Close()
	if strings.Contains(answer, `type="error"`) {
		return nil, fmt.Errorf("mam query refused: %s", answer)
	}
	var out []string
	for _, m := range c.Messages() {
		if strings.Contains(m, qid) {
			out = append(out, m)
		}
	}
	return out, nil
}

// serialize writes tokens as XML text: namespaces as plain xmlns
// attributes, text escaped. (encoding/xml's encoder rejects the duplicate
// xmlns attributes mellium's decoder hands out.)
func serialize(r xml.TokenReader) string {
	var b bytes.Buffer
	for {
		tok, err := r.Token()
		if tok != nil {
			switch v := tok.(type) {
			case xml.StartElement:
				b.WriteString("<" + v.Name.Local)
				if v.Name.Space != "" {
					fmt.Fprintf(&b, ` xmlns="%s"`, v.Name.Space)
				}
				for _, a := range v.Attr {
					if a.Name.Local == "xmlns" || a.Name.Space == "xmlns" {
						continue
					}
					b.WriteString(" " + a.Name.Local + `="`)
					_ = xml.EscapeText(&b, []byte(a.Value))
					b.WriteString(`"`)
				}
				b.WriteString(">")
			case xml.EndElement:
				b.WriteString("</" + v.Name.Local + ">")
			case xml.CharData:
				_ = xml.EscapeText(&b, v)
			}
		}
		if err != nil {
			return b.String()
		}
	}
}

// Package chat is Switchboard's side of team chat: the ejabberd HTTP admin
// API client, the names of chat users and rooms, and the sync that pushes
// chat channels, accounts and memberships from the database (the source of
// truth) to ejabberd. The project never implements an XMPP server: ejabberd
// is the chat server.
package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/switchboard/switchboard/internal/platform/backoff"
)

// Config says where the chat server is.
type Config struct {
	// APIURL is ejabberd's mod_http_api base, e.g. http://127.0.0.1:5281/api.
	APIURL string
	// Domain is the XMPP domain of users; MUCDomain the room service.
	Domain    string
	MUCDomain string
	// WSURL is the WebSocket URL chat clients use (wss:// in production).
	WSURL string
}

// Enabled reports whether a chat server is configured.
func (c Config) Enabled() bool { return c.APIURL != "" && c.Domain != "" }

// ErrUnavailable means the chat server is not configured or does not answer.
var ErrUnavailable = errors.New("chat server unavailable")

// APIError is a refusal from ejabberd (the command ran and said no).
type APIError struct {
	Command string
	Status  int
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("ejabberd %s: %d %s", e.Command, e.Status, e.Message)
}

// Client calls ejabberd's HTTP admin API: one POST per command.
type Client struct {
	cfg    Config
	http   *http.Client
	health health
}

// NewClient returns a client for cfg.
func NewClient(cfg Config) *Client {
	cfg.APIURL = strings.TrimRight(cfg.APIURL, "/")
	if cfg.MUCDomain == "" && cfg.Domain != "" {
		cfg.MUCDomain = "conference." + cfg.Domain
	}
	// Many concurrent sends go to one ejabberd: keep enough idle
	// connections that a burst does not open and close one per request.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 256, 256
	return &Client{cfg: cfg, http: &http.Client{Timeout: 10 * time.Second, Transport: tr}}
}

// Config returns the client's configuration (with defaults applied).
func (c *Client) Config() Config { return c.cfg }

// Retries of a command ejabberd answered with a server error: room
// commands crash there while the room's process starts or ends (seen
// right after a room is created or destroyed, and under load), which says
// nothing about the server being down.
const (
	callAttempts   = 3
	callRetryBase  = 50 * time.Millisecond
	callRetryLimit = 400 * time.Millisecond
)

// call runs one command; out (may be nil) receives the JSON answer. A 5xx
// answer is tried again (callAttempts, the platform backoff) before it
// counts as the server being unavailable; a server that does not answer
// counts at once (the callers retry on their own schedule).
func (c *Client) call(ctx context.Context, cmd string, args any, out any) error {
	if !c.cfg.Enabled() {
		return ErrUnavailable
	}
	body, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("ejabberd %s: encode: %w", cmd, err)
	}
	for attempt := 1; ; attempt++ {
		status, raw, err := c.post(ctx, cmd, body)
		if err != nil {
			return err
		}
		if status >= 500 {
			if attempt < callAttempts {
				select {
				case <-time.After(backoff.Delay(callRetryBase, callRetryLimit, attempt)):
					continue
				case <-ctx.Done():
				}
			}
			c.health.observe(false)
			return fmt.Errorf("ejabberd %s: %w: status %d %s", cmd, ErrUnavailable, status, errorText(raw))
		}
		c.health.observe(true)
		if status != http.StatusOK {
			return &APIError{Command: cmd, Status: status, Message: errorText(raw)}
		}
		if out == nil {
			return nil
		}
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("ejabberd %s: decode %q: %w", cmd, truncate(string(raw), 200), err)
		}
		return nil
	}
}

// post sends one command and returns the answer; an error means the
// server did not answer (recorded in the client's health).
func (c *Client) post(ctx context.Context, cmd string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.APIURL+"/"+cmd, bytes.NewReader(body))
	if err != nil {
		return 0, nil, fmt.Errorf("ejabberd %s: %w", cmd, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() == nil { // our own deadline or cancel says nothing about the server
			c.health.observe(false)
		}
		return 0, nil, fmt.Errorf("ejabberd %s: %w: %v", cmd, ErrUnavailable, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		c.health.observe(false)
		return 0, nil, fmt.Errorf("ejabberd %s: %w: read: %v", cmd, ErrUnavailable, err)
	}
	return resp.StatusCode, raw, nil
}

// errorText pulls the message out of either error shape ejabberd uses: a
// bare JSON string or {"status":"error","message":...}.
func errorText(raw []byte) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var m struct{ Message string }
	if json.Unmarshal(raw, &m) == nil && m.Message != "" {
		return m.Message
	}
	return truncate(string(raw), 200)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// resCode checks the integer answer of commands that return 0 on success.
func (c *Client) resCode(ctx context.Context, cmd string, args any) error {
	var code int
	if err := c.call(ctx, cmd, args, &code); err != nil {
		return err
	}
	if code != 0 {
		return &APIError{Command: cmd, Status: http.StatusOK, Message: fmt.Sprintf("result %d", code)}
	}
	return nil
}

// Status checks that the server answers.
func (c *Client) Status(ctx context.Context) error {
	return c.call(ctx, "status", struct{}{}, nil)
}

// Register creates an account (user is the local part).
func (c *Client) Register(ctx context.Context, user, password string) error {
	return c.call(ctx, "register", map[string]string{"user": user, "host": c.cfg.Domain, "password": password}, nil)
}

// IsConflict reports an "already exists" refusal.
func IsConflict(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusConflict
}

// ChangePassword sets a new password (ejabberd stores it as SCRAM).
func (c *Client) ChangePassword(ctx context.Context, user, password string) error {
	return c.resCode(ctx, "change_password", map[string]string{"user": user, "host": c.cfg.Domain, "newpass": password})
}

// CheckAccount reports whether the account exists.
func (c *Client) CheckAccount(ctx context.Context, user string) (bool, error) {
	var code int
	if err := c.call(ctx, "check_account", map[string]string{"user": user, "host": c.cfg.Domain}, &code); err != nil {
		return false, err
	}
	return code == 0, nil
}

// Unregister deletes an account; a missing account is not an error.
func (c *Client) Unregister(ctx context.Context, user string) error {
	// ejabberd 23.01 answers unregister with an empty string.
	err := c.call(ctx, "unregister", map[string]string{"user": user, "host": c.cfg.Domain}, nil)
	var ae *APIError
	if errors.As(err, &ae) && ae.Status < 500 {
		if ok, cerr := c.CheckAccount(ctx, user); cerr == nil && !ok {
			return nil
		}
	}
	return err
}

// RegisteredUsers lists the local parts of every account.
func (c *Client) RegisteredUsers(ctx context.Context) ([]string, error) {
	var users []string
	err := c.call(ctx, "registered_users", map[string]string{"host": c.cfg.Domain}, &users)
	return users, err
}

// KickUser ends every session of the account (after a password change).
func (c *Client) KickUser(ctx context.Context, user string) error {
	return c.call(ctx, "kick_user", map[string]string{"user": user, "host": c.cfg.Domain}, nil)
}

// OfflineCount is the number of messages waiting for the user's next login.
func (c *Client) OfflineCount(ctx context.Context, user string) (int, error) {
	var out struct {
		Value int `json:"value"`
	}
	err := c.call(ctx, "get_offline_count", map[string]string{"user": user, "server": c.cfg.Domain}, &out)
	return out.Value, err
}

type roomOption struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CreateRoom creates a room (name is the local part) with options; an
// existing room answers IsRoomExists.
func (c *Client) CreateRoom(ctx context.Context, room string, opts map[string]string) error {
	list := make([]roomOption, 0, len(opts))
	for k, v := range opts {
		list = append(list, roomOption{k, v})
	}
	return c.resCode(ctx, "create_room_with_opts", map[string]any{
		"name": room, "service": c.cfg.MUCDomain, "host": c.cfg.Domain, "options": list,
	})
}

// IsRoomExists reports the refusal of creating a room that exists.
func IsRoomExists(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && strings.Contains(ae.Message, "already exists")
}

// RoomOptions returns a room's options; a missing room is ErrNoRoom.
func (c *Client) RoomOptions(ctx context.Context, room string) (map[string]string, error) {
	var opts map[string]string
	err := c.call(ctx, "get_room_options", map[string]string{"name": room, "service": c.cfg.MUCDomain}, &opts)
	var ae *APIError
	starting := errors.As(err, &ae) && ae.Status == http.StatusNotFound // "Endpoint not found.": modules not registered yet
	if (ae != nil && ae.Status < 500 && !starting) || (err == nil && len(opts) == 0) {
		// ejabberd 23.01 answers a missing room with an empty object.
		return nil, ErrNoRoom
	}
	return opts, err
}

// ErrNoRoom means the room does not exist.
var ErrNoRoom = errors.New("room does not exist")

// ChangeRoomOption sets one option of an existing room.
func (c *Client) ChangeRoomOption(ctx context.Context, room, option, value string) error {
	return c.resCode(ctx, "change_room_option", map[string]string{"name": room, "service": c.cfg.MUCDomain, "option": option, "value": value})
}

// DestroyRoom removes a room; a missing room is not an error.
func (c *Client) DestroyRoom(ctx context.Context, room string) error {
	err := c.resCode(ctx, "destroy_room", map[string]string{"name": room, "service": c.cfg.MUCDomain})
	var ae *APIError
	if errors.As(err, &ae) && strings.Contains(ae.Message, "doesn't exist") {
		return nil
	}
	return err
}

// Rooms lists the local parts of every room on the service.
func (c *Client) Rooms(ctx context.Context) ([]string, error) {
	var jids []string
	if err := c.call(ctx, "muc_online_rooms", map[string]string{"service": c.cfg.MUCDomain}, &jids); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(jids))
	for _, j := range jids {
		local, _, _ := strings.Cut(j, "@")
		out = append(out, local)
	}
	return out, nil
}

// Affiliation is one entry of a room's affiliation list.
type Affiliation struct {
	Username    string `json:"username"`
	Domain      string `json:"domain"`
	Affiliation string `json:"affiliation"`
}

// RoomAffiliations lists the room's owners, admins, members and outcasts.
func (c *Client) RoomAffiliations(ctx context.Context, room string) ([]Affiliation, error) {
	var out []Affiliation
	err := c.call(ctx, "get_room_affiliations", map[string]string{"name": room, "service": c.cfg.MUCDomain}, &out)
	return out, err
}

// SetAffiliation sets a bare JID's affiliation (owner, admin, member, none).
func (c *Client) SetAffiliation(ctx context.Context, room, jid, affiliation string) error {
	return c.resCode(ctx, "set_room_affiliation", map[string]string{"name": room, "service": c.cfg.MUCDomain, "jid": jid, "affiliation": affiliation})
}

// Subscribe makes a full JID a MucSub subscriber of the room's events on
// nodes (e.g. "urn:xmpp:mucsub:nodes:messages"), so it may post without
// joining. Subscribing again replaces the nodes.
func (c *Client) Subscribe(ctx context.Context, fullJID, nick, room string, nodes ...string) error {
	return c.call(ctx, "subscribe_room", map[string]string{
		"user": fullJID, "nick": nick, "room": c.RoomJID(room), "nodes": strings.Join(nodes, ","),
	}, nil)
}

// SendMessage sends a message stanza (type chat, normal, headline or groupchat).
func (c *Client) SendMessage(ctx context.Context, typ, from, to, body string) error {
	return c.resCode(ctx, "send_message", map[string]string{"type": typ, "from": from, "to": to, "subject": "", "body": body})
}

// SendStanza routes a raw stanza (already escaped XML) from one JID to another.
func (c *Client) SendStanza(ctx context.Context, from, to, stanza string) error {
	return c.resCode(ctx, "send_stanza", map[string]string{"from": from, "to": to, "stanza": stanza})
}

// UserJID is the bare JID of a local part on the user domain.
func (c *Client) UserJID(local string) string { return local + "@" + c.cfg.Domain }

// RoomJID is the bare JID of a room.
func (c *Client) RoomJID(room string) string { return room + "@" + c.cfg.MUCDomain }

// SetFullName sets a user's vCard full name (FN): what clients show for
// the account instead of its address (mod_vcard, set_vcard of
// mod_admin_extra).
func (c *Client) SetFullName(ctx context.Context, user, name string) error {
	return c.call(ctx, "set_vcard", map[string]string{"user": user, "host": c.cfg.Domain, "name": "FN", "content": name}, nil)
}

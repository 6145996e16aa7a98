package chat

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"

	"golang.org/x/text/unicode/rangetable"

	"github.com/switchboard/switchboard/internal/models"
)

// Sender names in rooms.
//
// ejabberd's MUC (23.01, mod_muc_room:process_groupchat_message) removes a
// groupchat message's XEP-0172 <nick/> before relaying it to the occupants
// (only the archive, written before, keeps it), and every client shows the
// sender of a room message as the resource of its from address: the nick
// of the occupant, or MucSub subscriber, that sent it. So the name has to
// be the poster's nick in the room. Named posts (a channel message's
// from_name, a webhook's name, an inbound SMS's number) are therefore sent
// by SenderUser, an account that is a member of every room and a MucSub
// subscriber whose subscription nick the queue sets to the sender's name
// (subscribe_room again, a synchronous call into the room, so the post
// routed after it carries that nick); unnamed posts stay with the service
// account ("switchboard").
//
// Why this design and not the others:
//   - A subscription is part of the persistent room's stored state: it
//     survives ejabberd restarts with no session to keep up or rejoin, and
//     no presence is broadcast when its nick changes (occupants never see
//     "NOC left / NOC joined" noise, as they would with a bot occupant
//     changing nick per message).
//   - It is subscribed to the subject node only (rooms never change their
//     subject), so nothing comes back to the account: no session, no
//     offline store, and no bounce that would make ejabberd expel an
//     occupant (posting from a joined full JID with no session does that).
//   - One account for all names keeps the rooms' state small: one
//     subscriber per account and room, where an account per name would
//     add a subscriber (and an affiliation) per distinct name to every
//     room's stored state, rewritten on each change.
//   - The queue is the only writer of that nick and posts a room's rows one
//     after another on one replica (its lease), so a nick change cannot
//     interleave with another post into the same room; the sync never
//     touches this subscription (it keeps the service account's).
//   - An XEP-0114 component would not help: a room accepts groupchat only
//     from its occupants and subscribers, whatever sends it.
//
// No impersonation: a name equal (case-insensitively) to a member's likely
// nick, its extension number (the nick its bookmark sets) or its chat user
// name, is not taken; neither is a nick ejabberd refuses as in use by an
// occupant or another subscriber (any nick a member joined with). Such a
// name is shown as "<name> (bot)" (then "(bot 2)" …), and the archived
// <nick/> says the same.
//
// ejabberd 23.01 keeps every nick the subscription ever had reserved for
// it until the room restarts (muc_subscribers_put adds the new nick without
// removing the old): a member cannot join under a sender name posted since,
// and a room holds one small map entry per distinct sender name meanwhile.
const SenderUser = "switchboard.senders"

// senderResource is the resource named posts are sent from (the
// subscription is the bare JID's; the resource is informational).
const senderResource = "switchboard"

// SenderJID is the full JID named channel messages are sent from.
func (c *Client) SenderJID() string { return c.UserJID(SenderUser) + "/" + senderResource }

// nickTTL bounds how long the queue trusts its record of a room's nick
// without setting it again: what it cannot see (a room recreated by
// another replica's sync, a restored ejabberd spool) is corrected within it.
const nickTTL = time.Minute

// roomNicks records the nick SenderUser's subscription carries in each
// room, as this queue last set it. It is reset when the queue's lease
// starts and when ejabberd comes back after an outage.
type roomNicks struct {
	mu    sync.Mutex
	rooms map[string]roomNick
}

type roomNick struct {
	name string // the sender name asked for
	nick string // the nick the subscription carries ("" = none usable)
	at   time.Time
}

// get returns the room's nick for name, and whether the room's account
// membership and subscription are known at all (ok).
func (n *roomNicks) get(room, name string) (nick string, same, ok bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	rn, ok := n.rooms[room]
	if !ok || time.Since(rn.at) > nickTTL {
		return "", false, false
	}
	return rn.nick, rn.name == name, true
}

func (n *roomNicks) set(room, name, nick string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.rooms == nil {
		n.rooms = map[string]roomNick{}
	}
	n.rooms[room] = roomNick{name: name, nick: nick, at: time.Now()}
}

func (n *roomNicks) forget(room string) {
	n.mu.Lock()
	delete(n.rooms, room)
	n.mu.Unlock()
}

func (n *roomNicks) reset() {
	n.mu.Lock()
	n.rooms = nil
	n.mu.Unlock()
}

// sender returns who posts a queued row and the stanza to post: the
// service account for an unnamed post, SenderUser under the sender's name
// (or its disambiguated form) otherwise. reserved returns the tenant's
// members' nicks (folded), loaded once per room and batch.
func (q *Queue) sender(ctx context.Context, r queued, reserved func() (map[string]bool, error)) (from, stanza string, err error) {
	name := stanzaNick(r.Stanza)
	if name == "" {
		return q.c.ServiceJID(), r.Stanza, nil
	}
	nick, same, known := q.nicks.get(r.Room, name)
	if !same {
		nick, err = q.takeNick(ctx, r.Room, name, !known, reserved)
		switch {
		case errors.Is(err, errRoomRefused):
			// Posted as before (and refused if the room is missing); not
			// remembered, so the next post tries again.
			q.nicks.forget(r.Room)
			return q.c.ServiceJID(), r.Stanza, nil
		case err != nil:
			return "", "", err
		}
		q.nicks.set(r.Room, name, nick)
	}
	if nick == "" {
		// No nick ejabberd accepts for this name: posted as the service
		// account, the name only in the archived <nick/>.
		return q.c.ServiceJID(), r.Stanza, nil
	}
	return q.c.SenderJID(), withNick(r.Stanza, name, nick), nil
}

// takeNick sets SenderUser's subscription nick in room to name, or to the
// first form of it that is neither a member's nor refused by ejabberd, and
// returns it ("" when none is usable). join makes the account a member of
// the room first (a members-only room takes groupchat from subscribers
// with an affiliation only, and one without would be bounced silently).
func (q *Queue) takeNick(ctx context.Context, room, name string, join bool, reserved func() (map[string]bool, error)) (string, error) {
	res, err := reserved()
	if err != nil {
		return "", err
	}
	if join {
		if err := q.c.SetAffiliation(ctx, room, q.c.UserJID(SenderUser), "member"); err != nil {
			if isAPIRefusal(err) {
				return "", errRoomRefused
			}
			return "", err
		}
	}
	for _, form := range nickForms(name) {
	variants:
		for i := 0; i < 4; i++ {
			nick := form
			if i > 0 {
				nick = form + " (bot)"
				if i > 1 {
					nick = fmt.Sprintf("%s (bot %d)", form, i)
				}
			}
			if res[foldNick(nick)] {
				continue
			}
			// The nick is also the resource of the subscribing JID:
			// ejabberd parses that JID before anything changes, so a
			// nick its resourceprep refuses ("Malformed user JID") is
			// refused here. Taken as the nick, it would crash the room
			// at the next post (it becomes the from address's resource).
			err := q.c.Subscribe(ctx, q.c.UserJID(SenderUser)+"/"+nick, nick, room, serviceNode)
			switch {
			case err == nil:
				return nick, nil
			case isNickInUse(err):
				continue
			case isMalformedJID(err):
				break variants
			case isAPIRefusal(err):
				return "", errRoomRefused
			default:
				return "", err
			}
		}
	}
	return "", nil
}

// errRoomRefused is the room refusing the sender account's membership or
// subscription for another reason than the nick: it does not exist (yet).
var errRoomRefused = errors.New("the room refused the sender account")

// isNickInUse reports ejabberd's refusal of a nick an occupant or another
// subscriber has ("That nickname is already in use by another occupant",
// "That nickname is registered by another person").
func isNickInUse(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status < 500 && strings.Contains(ae.Message, "nickname")
}

func isMalformedJID(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status < 500 && strings.Contains(ae.Message, "Malformed")
}

// isAPIRefusal is a command ejabberd ran and refused (no room, …), as
// opposed to a server that did not answer.
func isAPIRefusal(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status < 500 && ae.Status != 404
}

// reservedNicks are the folded nicks the tenant's chat users are known by:
// extension numbers (the nick of their bookmarks) and user names.
func (q *Queue) reservedNicks(ctx context.Context, tenant string) (map[string]bool, error) {
	out := map[string]bool{}
	o, err := q.st.Tenant(ctx, tenant)
	if errors.Is(err, models.ErrNotFound) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("members of %s: %w", tenant, err)
	}
	exts, err := q.st.ChatAccounts(ctx, o)
	if err != nil {
		return nil, err
	}
	for _, e := range exts {
		out[foldNick(e)] = true
		out[foldNick(UserLocal(o.Tenant, e))] = true
	}
	return out, nil
}

// nickForms are the nicks to try for a name: the name cleaned of
// invisible characters, then, should ejabberd refuse that, without what
// its resourceprep (Unicode 3.2 tables) may not know: characters outside
// the Basic Multilingual Plane or unassigned in Unicode 4.1 (newer emoji).
func nickForms(name string) []string {
	base := cleanNick(name)
	if base == "" {
		return nil
	}
	plain := strings.Map(func(r rune) rune {
		if r > 0xFFFF || !unicode.Is(assigned41, r) {
			return -1
		}
		return r
	}, base)
	plain = cleanNick(plain)
	if plain == "" || plain == base {
		return []string{base}
	}
	return []string{base, plain}
}

var assigned41 = rangetable.Assigned("4.1.0")

// cleanNick drops control, formatting (bidirectional overrides, zero
// width), private-use and unassigned characters, turns other spaces into
// plain ones and collapses them: what is left is what a reader sees.
func cleanNick(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsSpace(r):
			return ' '
		case unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S):
			return r
		}
		return -1
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

// foldNick is the form nicks are compared in: a different case or spacing
// does not make a different name to a reader.
func foldNick(s string) string { return strings.ToLower(cleanNick(s)) }

// nickOpen starts the XEP-0172 element renderStanza writes.
var nickOpen = `<nick xmlns="` + nsNick + `">`

// stanzaNick is the sender name renderStanza put in a stanza ("" = none).
func stanzaNick(stanza string) string {
	_, rest, ok := strings.Cut(stanza, nickOpen)
	if !ok {
		return ""
	}
	text, _, _ := strings.Cut(rest, "</nick>")
	var v struct {
		Text string `xml:",chardata"`
	}
	if xml.Unmarshal([]byte("<n>"+text+"</n>"), &v) != nil {
		return ""
	}
	return v.Text
}

// withNick replaces the stanza's XEP-0172 name by the nick it is posted
// under, so the archived copy does not name a member either.
func withNick(stanza, name, nick string) string {
	if nick == name {
		return stanza
	}
	var from, to bytes.Buffer
	escape(&from, name)
	escape(&to, nick)
	return strings.Replace(stanza, nickOpen+from.String()+"</nick>", nickOpen+to.String()+"</nick>", 1)
}

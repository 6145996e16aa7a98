package chat_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/comms/chat"
	"github.com/switchboard/switchboard/internal/comms/chat/chattest"
	"github.com/switchboard/switchboard/internal/models"
)

// TestRoomOccupantsSeeSenderNames: a member in the room as an occupant
// (a real XMPP session, mellium) reads each post's live groupchat stanza
// and sees its sender's name as the from address's resource, as every
// client shows it (ejabberd strips the XEP-0172 <nick/> from live room
// messages), and so does the archive; across an ejabberd restart too. A
// name equal to a member's nick is not shown as that member, whether the
// member is in the room or not, and a name ejabberd cannot take as a nick
// does not break the room.
func TestRoomOccupantsSeeSenderNames(t *testing.T) {
	srv, c, st, o := setup(t)
	ctx := context.Background()
	for _, ext := range []string{"1001", "1002"} {
		member(t, c, st, o, ext)
	}
	opsRoom(t, c, st, o)
	const room = "acme-ops@conference." + domain
	q := chat.NewQueue(c, st, chat.QueueOptions{Logger: quiet()})
	join := func() *chattest.Client {
		t.Helper()
		cl, err := chattest.Login(ctx, srv.WSURL, "acme-1001@"+domain, "pw-1001-long-enough")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		if err := cl.Join(ctx, room, "1001", 10*time.Second); err != nil {
			t.Fatal(err)
		}
		return cl
	}
	cl := join()
	post := func(name, body string) {
		t.Helper()
		if _, err := q.Enqueue(ctx, chat.ChannelMessage{Room: "acme-ops", Body: body, FromName: name}, chat.Event{Tenant: "Acme", Channel: "ops", FromName: name, Body: body}); err != nil {
			t.Fatal(err)
		}
		if n, err := q.DrainOnce(ctx); err != nil || n != 1 {
			t.Fatalf("posted %d, %v", n, err)
		}
	}
	// seen waits for the live stanza of body and returns its sender's nick.
	seen := func(cl *chattest.Client, body string) string {
		t.Helper()
		m, ok := cl.WaitMessage(10*time.Second, `type="groupchat"`, ">"+body+"</body>")
		if !ok {
			t.Fatalf("no live message %q; received %q\n%s", body, cl.Messages(), srv.LogTail())
		}
		return nickOf(t, m)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"NOC", "disk full", "NOC"},
		{"", "no name", "switchboard"},
		{"NOC", "disk full again", "NOC"},
		{"Grafana", "cpu high", "Grafana"},
		// The member in the room (ejabberd refuses the nick) and the one
		// who is not (Switchboard refuses it): never shown as them.
		{"1001", "i am 1001", "1001 (bot)"},
		{"1002", "i am 1002", "1002 (bot)"},
		{"ACME-1002", "i am acme-1002", "ACME-1002 (bot)"},
		// Invisible characters go; a name ejabberd's Unicode 3.2 tables
		// do not know loses what they lack.
		{"\u202eNOC\u200b", "hidden characters", "NOC"},
		{"🚀 Deploys", "rocket", "Deploys"},
		{"+15551234567", "an SMS", "+15551234567"},
		{"ops/noc@home", "jid-like", "ops/noc@home"},
	} {
		post(tc.name, tc.body)
		if got := seen(cl, tc.body); got != tc.want {
			t.Fatalf("%q posted as %q: the room shows %q, want %q", tc.body, tc.name, got, tc.want)
		}
	}
	// The room still works (a nick ejabberd cannot encode crashes it).
	post("NOC", "still here")
	if got := seen(cl, "still here"); got != "NOC" {
		t.Fatalf("after the odd names: %q", got)
	}

	// The archive shows the same senders.
	var (
		archived []string
		err      error
	)
	if !chattest.WaitFor(ctx, 10*time.Second, func() bool {
		archived, err = cl.Archive(ctx, room)
		return err == nil && len(archived) == 12
	}) {
		t.Fatalf("archive has %d messages (%v): %q", len(archived), err, archived)
	}
	for body, want := range map[string]string{"disk full": "NOC", "no name": "switchboard", "i am 1002": "1002 (bot)", "still here": "NOC"} {
		var found bool
		for _, m := range archived {
			if strings.Contains(m, ">"+body+"</body>") {
				found = true
				if !strings.Contains(m, `from="`+room+"/"+want+`"`) {
					t.Fatalf("archived %q not from %s: %s", body, want, m)
				}
			}
		}
		if !found {
			t.Fatalf("%q not archived: %q", body, archived)
		}
	}

	// After an ejabberd restart, posts still carry their names.
	srv.Stop()
	srv.Restart()
	if !chattest.WaitFor(ctx, 20*time.Second, func() bool { return c.Status(ctx) == nil && c.Up() }) {
		t.Fatal("ejabberd not back")
	}
	cl = join()
	for _, tc := range []struct{ name, body string }{{"NOC", "after restart"}, {"Grafana", "grafana after restart"}, {"NOC", "noc after restart"}} {
		post(tc.name, tc.body)
		if got := seen(cl, tc.body); got != tc.name {
			t.Fatalf("after the restart %q shows %q, want %q", tc.body, got, tc.name)
		}
	}
}

// opsRoom creates the channel ops and its room (as the sync does after
// the commit).
func opsRoom(t *testing.T, c *chat.Client, st *models.Store, o models.Owner) {
	t.Helper()
	ctx := context.Background()
	rec, err := st.Create(ctx, st.Registry().Resource("chat_channels"), o, map[string]any{"name": "ops"})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := json.Marshal(rec)
	if err := chat.NewSync(c, st, quiet()).Handle(ctx, changes.Change{Resource: "chat_channels", Op: changes.Create, Tenant: "Acme", Key: "1", After: after}); err != nil {
		t.Fatal(err)
	}
}

// member gives the tenant an extension with a chat account.
func member(t *testing.T, c *chat.Client, st *models.Store, o models.Owner, ext string) {
	t.Helper()
	ctx := context.Background()
	if _, err := st.Create(ctx, st.Registry().Resource("extensions"), o, map[string]any{"name": ext}); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateChatAccount(ctx, o, ext, "pw-"+ext+"-long-enough", false); err != nil {
		t.Fatal(err)
	}
	if err := c.Register(ctx, "acme-"+ext, "pw-"+ext+"-long-enough"); err != nil {
		t.Fatal(err)
	}
}

// nickOf is the resource of a room message's from address: the sender's
// name as every client shows it.
func nickOf(t *testing.T, stanza string) string {
	t.Helper()
	_, rest, ok := strings.Cut(stanza, ` from="`)
	if !ok {
		t.Fatalf("no from: %s", stanza)
	}
	from, _, _ := strings.Cut(rest, `"`)
	_, nick, _ := strings.Cut(from, "/")
	return strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&#34;", `"`, "&#39;", "'").Replace(nick)
}

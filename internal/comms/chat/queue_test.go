package chat_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/changes"
	"github.com/switchboard/switchboard/internal/comms/chat"
	"github.com/switchboard/switchboard/internal/comms/chat/chattest"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// TestQueuePostsInOrderAcrossAnOutage follows accepted channel messages to
// the room's archive: posted once each, in order, with their sender name;
// refused while the chat server is known to be down; the ones accepted
// before an outage posted after it, and a room waiting for a retry holds
// back its later messages.
func TestQueuePostsInOrderAcrossAnOutage(t *testing.T) {
	srv, c, st, o := setup(t)
	ctx := context.Background()
	// A member account to read the room's archive with.
	member(t, c, st, o, "1001")
	opsRoom(t, c, st, o)
	q := chat.NewQueue(c, st, chat.QueueOptions{Logger: quiet(), RetryMin: time.Minute, RetryMax: time.Minute})
	send := func(body string) error {
		_, err := q.Enqueue(ctx, chat.ChannelMessage{Room: "acme-ops", Body: body, FromName: "CI bot"}, chat.Event{Tenant: "Acme", Channel: "ops", FromName: "CI bot", Body: body})
		return err
	}
	drain := func() int {
		t.Helper()
		n, err := q.DrainOnce(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	archive := func() []string {
		t.Helper()
		cl, err := chattest.Login(ctx, srv.WSURL, "acme-1001@"+domain, "pw-1001-long-enough")
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		msgs, err := cl.Archive(ctx, "acme-ops@conference."+domain)
		if err != nil {
			t.Fatal(err)
		}
		return msgs
	}
	bodies := func(msgs []string) string {
		var out []string
		for _, m := range msgs {
			if !strings.Contains(m, ">CI bot</nick>") || !strings.Contains(m, `<origin-id xmlns="urn:xmpp:sid:0"`) {
				t.Fatalf("archived message without its sender name or id: %s", m)
			}
			_, rest, _ := strings.Cut(m, "<body")
			_, rest, _ = strings.Cut(rest, ">")
			body, _, _ := strings.Cut(rest, "</body>")
			out = append(out, body)
		}
		return strings.Join(out, ",")
	}

	// Accepted messages are not posted inside Enqueue: the worker posts them.
	for _, b := range []string{"one", "two", "three"} {
		if err := send(b); err != nil {
			t.Fatal(err)
		}
	}
	if got := bodies(archive()); got != "" {
		t.Fatalf("archive before the worker ran: %s", got)
	}
	if n := drain(); n != 3 {
		t.Fatalf("drained %d, want 3", n)
	}
	if got := bodies(archive()); got != "one,two,three" {
		t.Fatalf("archive %s", got)
	}
	// A second pass posts nothing again.
	if n := drain(); n != 0 {
		t.Fatalf("second pass drained %d", n)
	}
	if n, _ := q.Pending(ctx); n != 0 {
		t.Fatalf("%d messages still queued", n)
	}
	// Each posted message has its chat.message event, recorded with the post.
	evs, err := st.OutboxAfter(ctx, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var posted []string
	for _, ev := range evs {
		if ev.Op == changes.Event && ev.Resource == "chat.message" {
			var d map[string]string
			_ = json.Unmarshal(ev.After, &d)
			if ev.Tenant != "Acme" || ev.Key != "ops" || d["channel"] != "ops" || d["from_name"] != "CI bot" {
				t.Fatalf("event %+v %v", ev, d)
			}
			posted = append(posted, d["body"])
		}
	}
	if strings.Join(posted, ",") != "one,two,three" {
		t.Fatalf("chat.message events %v", posted)
	}

	// Accepted, then the chat server stops before the worker posts them.
	for _, b := range []string{"four", "five"} {
		if err := send(b); err != nil {
			t.Fatal(err)
		}
	}
	srv.Stop()
	if n := drain(); n != 2 {
		t.Fatalf("drain during the outage read %d rows", n)
	}
	if c.Up() {
		t.Fatal("client still believes the chat server is up after a failed post")
	}
	if err := send("refused"); !errors.Is(err, chat.ErrUnavailable) {
		t.Fatalf("enqueue during the outage: %v", err)
	}
	if n, _ := q.Pending(ctx); n != 2 {
		t.Fatalf("%d queued during the outage, want 2", n)
	}
	srv.Restart()
	if err := c.Status(ctx); err != nil || !c.Up() {
		t.Fatalf("status after restart: %v", err)
	}
	// "four" waits for its retry; "six", accepted now, must not overtake it.
	if err := send("six"); err != nil {
		t.Fatal(err)
	}
	if n := drain(); n != 0 {
		t.Fatalf("drained %d while the room's oldest message waits for its retry", n)
	}
	// The failed post was recorded for a retry in a minute; let that minute pass.
	var tries int
	var lastErr string
	if err := st.Querier().QueryRowContext(ctx, "SELECT attempts, last_error FROM chat_outbox WHERE stanza LIKE '%>four<%'").Scan(&tries, &lastErr); err != nil || tries != 1 || lastErr == "" {
		t.Fatalf("failed row: attempts %d, error %q, %v", tries, lastErr, err)
	}
	if _, err := st.Querier().ExecContext(ctx, "UPDATE chat_outbox SET next_attempt_at = ? WHERE attempts > 0", models.FormatTime(time.Now())); err != nil {
		t.Fatal(err)
	}
	if n := drain(); n != 3 {
		t.Fatalf("drained %d after the retry time, want 3", n)
	}
	if got := bodies(archive()); got != "one,two,three,four,five,six" {
		t.Fatalf("archive after the outage %s", got)
	}
	var attempts int
	if err := st.Querier().GetContext(ctx, &attempts, "SELECT COUNT(*) FROM chat_outbox"); err != nil || attempts != 0 {
		t.Fatalf("rows left %d %v", attempts, err)
	}
}

// TestQueueKeepsAMessageAStartingServerDidNotKnowHowToTake: a starting
// ejabberd answers its HTTP API before its modules have registered
// send_stanza (404 "Endpoint not found."); the message is tried again,
// not dropped. Only a stanza ejabberd found wrong (400) is dropped.
func TestQueueKeepsAMessageAStartingServerDidNotKnowHowToTake(t *testing.T) {
	var mu sync.Mutex
	answers := []struct {
		status int
		body   string
	}{{404, `{"status":"error","code":40,"message":"Endpoint not found."}`}, {200, `0`}, {400, `"unclosed token"`}}
	var posted []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path != "/send_stanza" {
			_, _ = w.Write([]byte(roomOptions(r)))
			return
		}
		var args map[string]string
		_ = json.NewDecoder(r.Body).Decode(&args)
		a := answers[0]
		if len(answers) > 1 {
			answers = answers[1:]
		}
		if a.status == 200 {
			posted = append(posted, args["stanza"])
		}
		w.WriteHeader(a.status)
		_, _ = w.Write([]byte(a.body))
	}))
	t.Cleanup(api.Close)
	st := storetest.Open(t, storetest.SQLite(t))
	ctx := context.Background()
	c := chat.NewClient(chat.Config{APIURL: api.URL, Domain: domain})
	q := chat.NewQueue(c, st, chat.QueueOptions{Logger: quiet(), RetryMin: time.Millisecond, RetryMax: time.Millisecond})
	for _, body := range []string{"kept", "wrong"} {
		if _, err := q.Enqueue(ctx, chat.ChannelMessage{Room: "acme-ops", Body: body}, chat.Event{Tenant: "Acme", Channel: "ops", Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.DrainOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := q.Pending(ctx); n != 2 {
		t.Fatalf("%d messages queued after the 404, want 2 (nothing dropped)", n)
	}
	time.Sleep(5 * time.Millisecond)
	if _, err := q.DrainOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if len(posted) != 1 || !strings.Contains(posted[0], "<body>kept</body>") {
		t.Fatalf("posted %q", posted)
	}
	if n, _ := q.Pending(ctx); n != 0 {
		t.Fatalf("%d messages queued after a 200 and a 400, want 0", n)
	}
}

// roomOptions answers a fake ejabberd's get_room_options as 23.01 does
// for an existing room, and "0" for any other command.
func roomOptions(r *http.Request) string {
	if r.URL.Path == "/get_room_options" {
		return `{"title":"ops","persistent":"true","mam":"true"}`
	}
	return `0`
}

// TestQueuePostsAgainWhatAStoppingRoomDidNotHandle: send_stanza answers
// success once ejabberd has routed the stanza, not once the room archived
// it. A stopping ejabberd still answers on open connections after it
// stopped its rooms, and drops what is routed to them ("Failed to route
// packet"; seen: a message accepted just before an outage missing from the
// archive afterwards). The queue confirms its posts with get_room_options,
// which the room answers after them, and posts again what it could not
// confirm, unless the channel itself is gone.
func TestQueuePostsAgainWhatAStoppingRoomDidNotHandle(t *testing.T) {
	for _, tc := range []struct {
		name          string
		status        int    // get_room_options while stopping
		answer        string // its body
		deleteChannel bool
		posts         int // posts in all
	}{
		{name: "api failing", status: http.StatusServiceUnavailable, posts: 2},
		{name: "room gone, channel kept", status: http.StatusOK, answer: `{}`, posts: 2},
		{name: "room gone with its channel", status: http.StatusOK, answer: `{}`, deleteChannel: true, posts: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var (
				mu       sync.Mutex
				posted   []string
				stopping = true
			)
			api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				switch {
				case r.URL.Path == "/send_stanza":
					var args map[string]string
					_ = json.NewDecoder(r.Body).Decode(&args)
					posted = append(posted, args["stanza"])
					_, _ = w.Write([]byte(`0`))
				case stopping && r.URL.Path == "/get_room_options":
					w.WriteHeader(tc.status)
					_, _ = w.Write([]byte(tc.answer))
				default:
					_, _ = w.Write([]byte(roomOptions(r)))
				}
			}))
			t.Cleanup(api.Close)
			st, o := acmeStore(t, "conference."+domain)
			ctx := context.Background()
			channels := st.Registry().Resource("chat_channels")
			ch, err := st.Create(ctx, channels, o, map[string]any{"name": "ops"})
			if err != nil {
				t.Fatal(err)
			}
			if tc.deleteChannel {
				if err := st.Delete(ctx, channels, o, fmt.Sprint(ch["id"])); err != nil {
					t.Fatal(err)
				}
			}
			c := chat.NewClient(chat.Config{APIURL: api.URL, Domain: domain})
			q := chat.NewQueue(c, st, chat.QueueOptions{Logger: quiet(), RetryMin: time.Millisecond, RetryMax: time.Millisecond})
			id, err := q.Enqueue(ctx, chat.ChannelMessage{Room: "acme-ops", Body: "just before the outage"}, chat.Event{Tenant: "Acme", Channel: "ops", Body: "just before the outage"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := q.DrainOnce(ctx); err != nil {
				t.Fatal(err)
			}
			want := 1
			if tc.deleteChannel {
				want = 0
			}
			if n, _ := q.Pending(ctx); n != want || len(posted) != 1 {
				t.Fatalf("after a post the room did not confirm: %d queued (want %d), %d posts", n, want, len(posted))
			}
			var events int
			if err := st.Querier().GetContext(ctx, &events, "SELECT COUNT(*) FROM outbox WHERE after_json LIKE '%just before the outage%'"); err != nil || events != 1-want {
				t.Fatalf("%d chat.message events (%v), want %d", events, err, 1-want)
			}

			mu.Lock()
			stopping = false
			mu.Unlock()
			if err := c.Status(ctx); err != nil || !c.Up() {
				t.Fatalf("status once back: %v", err)
			}
			time.Sleep(5 * time.Millisecond)
			if _, err := q.DrainOnce(ctx); err != nil {
				t.Fatal(err)
			}
			if n, _ := q.Pending(ctx); n != 0 || len(posted) != tc.posts || posted[0] != posted[len(posted)-1] || !strings.Contains(posted[0], id) {
				t.Fatalf("after the room came back: %d queued, posts %q (want the stanza with id %s %d times)", n, posted, id, tc.posts)
			}
		})
	}
}

// TestPostedMessagesDoNotComeBackToTheServiceAccount: the service account
// posts every channel message; ejabberd must store each one once, in the
// room's archive. Subscribed to the room's messages it got every message
// back into its offline store (it has no session), one write per message
// growing until the per-user limit, then a bounce each. A room subscribed
// that way by an earlier version is corrected by the sync.
func TestPostedMessagesDoNotComeBackToTheServiceAccount(t *testing.T) {
	srv, c, st, o := setup(t)
	ctx := context.Background()
	member(t, c, st, o, "1001")
	rec, err := st.Create(ctx, st.Registry().Resource("chat_channels"), o, map[string]any{"name": "ops"})
	if err != nil {
		t.Fatal(err)
	}
	after, _ := json.Marshal(rec)
	sync := chat.NewSync(c, st, quiet())
	change := changes.Change{Resource: "chat_channels", Op: changes.Create, Tenant: "Acme", Key: "1", After: after}
	if err := sync.Handle(ctx, change); err != nil {
		t.Fatal(err)
	}
	// As an earlier version left it: subscribed to the messages node.
	if err := c.Subscribe(ctx, c.ServiceJID(), "switchboard", "acme-ops", "urn:xmpp:mucsub:nodes:messages"); err != nil {
		t.Fatal(err)
	}
	if err := sync.Handle(ctx, changes.Change{Resource: "chat_channels", Op: changes.Update, Tenant: "Acme", Key: "1", Before: after, After: after}); err != nil {
		t.Fatal(err)
	}
	q := chat.NewQueue(c, st, chat.QueueOptions{Logger: quiet()})
	const n = 5
	for i := 0; i < n; i++ {
		body := fmt.Sprintf("m%d", i)
		if _, err := q.Enqueue(ctx, chat.ChannelMessage{Room: "acme-ops", Body: body}, chat.Event{Tenant: "Acme", Channel: "ops", Body: body}); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := q.DrainOnce(ctx); err != nil || got != n {
		t.Fatalf("drained %d, %v", got, err)
	}
	cl, err := chattest.Login(ctx, srv.WSURL, "acme-1001@"+domain, "pw-1001-long-enough")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var archived []string
	if !chattest.WaitFor(ctx, 10*time.Second, func() bool {
		archived, err = cl.Archive(ctx, "acme-ops@conference."+domain)
		return err == nil && len(archived) == n
	}) {
		t.Fatalf("room archive has %d of %d messages (%v)", len(archived), n, err)
	}
	// ejabberd routes to subscribers right after archiving: give it time.
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		if got, err := c.OfflineCount(ctx, chat.ServiceUser); err != nil || got != 0 {
			t.Fatalf("the service account has %d offline messages (%v): posts come back to it", got, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

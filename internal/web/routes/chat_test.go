package routes_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/app"
	"github.com/switchboard/switchboard/internal/app/apptest"
	"github.com/switchboard/switchboard/internal/comms/chat"
	"github.com/switchboard/switchboard/internal/comms/chat/chattest"
	"github.com/switchboard/switchboard/internal/platform/wait"
)

const chatDomain = "chat.test"

// chatEnv is a running server wired to a private ejabberd, with a tenant.
type chatEnv struct {
	*apptest.Server
	xmpp   *chattest.Server
	chat   *chat.Client
	tenant string
	lower  string // the tenant as it appears in JIDs
}

// eachChatEnv runs fn per backend pairing with a fresh ejabberd and server.
// Serial: several private ejabberds starting at once beside the parallel
// tests failed to start in CI ("ejabberd exited during start"), and the
// outage test stops and restarts its ejabberd on a deadline.
func eachChatEnv(t *testing.T, fn func(t *testing.T, e *chatEnv)) {
	t.Helper()
	eachChatEnvWith(t, nil, fn)
}

// eachChatEnvWith is eachChatEnv with more server configuration.
func eachChatEnvWith(t *testing.T, env map[string]string, fn func(t *testing.T, e *chatEnv)) {
	t.Helper()
	for _, be := range apptest.Envs(t) {
		t.Run(be.Name, func(t *testing.T) {
			x := chattest.Start(t, chatDomain)
			cfg := map[string]string{
				"SWITCHBOARD_CHAT_API_URL": x.APIURL,
				"SWITCHBOARD_CHAT_DOMAIN":  chatDomain,
				"SWITCHBOARD_CHAT_WS_URL":  x.WSURL,
			}
			for k, v := range env {
				cfg[k] = v
			}
			s := apptest.Start(t, be, cfg)
			tenant := s.Tenant(t, "chat")
			fn(t, &chatEnv{Server: s, xmpp: x, chat: chat.NewClient(chat.Config{APIURL: x.APIURL, Domain: chatDomain}), tenant: tenant, lower: strings.ToLower(tenant)})
		})
	}
}

// provision provisions an agent and returns its bundle.
func (e *chatEnv) provision(t *testing.T, ext string) map[string]any {
	t.Helper()
	return e.Do(t, "POST", "/api/connect/agent/"+e.tenant, e.Key, map[string]any{"extension": ext, "first_name": "Bot", "last_name": ext}).Expect(t, 201).Map(t)
}

// waitRoom waits until the sync has created the room.
func (e *chatEnv) waitRoom(t *testing.T, room string) map[string]string {
	t.Helper()
	var opts map[string]string
	wait.Until(t, 20*time.Second, "room "+room+" on ejabberd", func() bool {
		var err error
		opts, err = e.chat.RoomOptions(context.Background(), room)
		return err == nil
	})
	return opts
}

// waitMember waits until the room lists the JID as a member.
// On a timeout it shows the room's affiliations and the server's chat log
// lines.
func (e *chatEnv) waitMember(t *testing.T, room, jid string) {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		affs, err := e.chat.RoomAffiliations(context.Background(), room)
		for _, a := range affs {
			if a.Username+"@"+a.Domain == jid && a.Affiliation == "member" && err == nil {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s as a member of %s; its affiliations (%v): %+v\nchat log lines: %q\nejabberd log: %s", jid, room, err, affs, e.chatLogLines(t), e.xmpp.LogTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// chatLogLines are the server's log lines about chat.
func (e *chatEnv) chatLogLines(t *testing.T) []string {
	var lines []string
	for _, l := range e.Logs.Lines(t) {
		if line := fmt.Sprint(l); strings.Contains(line, "chat") {
			lines = append(lines, line)
		}
	}
	return lines
}

// archiveOf waits until the room's archive holds at least n messages (a
// channel message is accepted first and posted right after) and returns it.
// On a timeout it shows what the server still has queued for the chat
// server and what it logged about chat, so a failure says where the
// messages stopped.
func (e *chatEnv) archiveOf(t *testing.T, cl *chattest.Client, roomJID string, n int) []string {
	t.Helper()
	var msgs []string
	deadline := time.Now().Add(45 * time.Second)
	for {
		var err error
		msgs, err = cl.Archive(context.Background(), roomJID)
		if err == nil && len(msgs) >= n {
			return msgs
		}
		if time.Now().After(deadline) {
			var queued []struct {
				Room      string `db:"room"`
				Attempts  int    `db:"attempts"`
				Next      string `db:"next_attempt_at"`
				LastError string `db:"last_error"`
			}
			qerr := e.Store.Querier().SelectContext(context.Background(), &queued, `SELECT room, attempts, next_attempt_at, last_error FROM chat_outbox ORDER BY id`)
			chatLogs := e.chatLogLines(t)
			t.Fatalf("timed out waiting for %d messages in the archive of %s; it has %d (%v): %q\nstill queued (%v): %+v\nchat log lines: %q",
				n, roomJID, len(msgs), err, msgs, qerr, queued, chatLogs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func login(t *testing.T, e *chatEnv, bundle map[string]any) *chattest.Client {
	t.Helper()
	conn := bundle["connect"].(map[string]any)
	// Nothing but the bundle: the WebSocket URL's host (an address) is not
	// the XMPP domain, which the bundle's jid carries.
	cl, err := chattest.Login(context.Background(), conn["websocket_url"].(string), conn["jid"].(string), conn["password"].(string))
	if err != nil {
		t.Fatalf("XMPP login with the bundle: %v", err)
	}
	t.Cleanup(cl.Close)
	return cl
}

func TestChatWithoutServer(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "nochat")
		// Configuration still works; the room JID waits for a chat server.
		ch := s.Do(t, "POST", "/api/tenants/"+tenant+"/chat_channels/", s.Key, map[string]any{"name": "general"}).Expect(t, 201).Map(t)
		if ch["jid"] != nil {
			t.Fatalf("jid without a chat server = %v", ch["jid"])
		}
		r := s.Do(t, "POST", "/api/connect/message/"+tenant, s.Key, map[string]any{"to": "general", "body": "hi"}).Expect(t, 503)
		if r.Code(t) != "chat_unavailable" || r.Header.Get("Retry-After") != "" {
			t.Fatalf("code %s, Retry-After %q (none: retrying does not configure a chat server)", r.Code(t), r.Header.Get("Retry-After"))
		}
		s.Do(t, "POST", "/api/connect/agent/"+tenant, s.Key, map[string]any{"extension": "1001"}).Expect(t, 503)
		s.Do(t, "GET", "/api/tenants/"+tenant+"/extensions/1001", s.Key, nil).Expect(t, 404)
		ready := s.Do(t, "GET", "/readyz", "", nil).Expect(t, 200).Map(t)
		if state, _ := ready["checks"].(map[string]any)["chat"].(string); !strings.HasPrefix(state, "not configured") {
			t.Fatalf("readyz chat = %q", state)
		}
		// Scope and validation come before availability.
		other := s.KeyFor(t, map[string]any{"tenant": s.Tenant(t, "other")})
		s.Do(t, "POST", "/api/connect/message/"+tenant, other, map[string]any{"to": "general", "body": "hi"}).Expect(t, 403)
		s.Do(t, "POST", "/api/connect/message/"+tenant, s.Key, map[string]any{"to": "general", "body": "{x", "body_type": "JSON"}).Expect(t, 400)
	})
}

func TestChannelMessageLandsInRoomArchive(t *testing.T) {
	eachChatEnv(t, func(t *testing.T, e *chatEnv) {
		base := "/api/tenants/" + e.tenant + "/chat_channels/"
		ch := e.Do(t, "POST", base, e.Key, map[string]any{"name": "ops", "display_name": "Operations", "topic": "alerts"}).Expect(t, 201).Map(t)
		room := e.lower + "-ops"
		if ch["jid"] != room+"@conference."+chatDomain {
			t.Fatalf("jid = %v", ch["jid"])
		}
		opts := e.waitRoom(t, room)
		if opts["persistent"] != "true" || opts["mam"] != "true" || opts["members_only"] != "true" || opts["title"] != "Operations" {
			t.Fatalf("room options %v", opts)
		}
		agent := e.provision(t, "1001")
		e.waitMember(t, room, e.lower+"-1001@"+chatDomain)

		r := e.Do(t, "POST", "/api/connect/message/"+e.tenant, e.Key, map[string]any{"to": "ops", "body": "deploy <done> & green", "from_name": "CI bot"}).Expect(t, 200).Map(t)
		if r["status"] != "sent" || r["channel"] != "ops" || r["jid"] != room+"@conference."+chatDomain || len(r) != 3 {
			t.Fatalf("answer %v", r)
		}
		e.Do(t, "POST", "/api/connect/message/"+e.tenant, e.Key, map[string]any{"to": "ops", "body": `{"build": 42}`, "body_type": "JSON"}).Expect(t, 200)

		cl := login(t, e, agent)
		archived := e.archiveOf(t, cl, room+"@conference."+chatDomain, 2)
		if len(archived) != 2 || !strings.Contains(archived[0], ">deploy &lt;done&gt; &amp; green</body>") || !strings.Contains(archived[0], ">CI bot</nick>") {
			t.Fatalf("room archive %v", archived)
		}
		if !strings.Contains(archived[1], `<json xmlns="urn:xmpp:json:0">{&#34;build&#34;: 42}</json>`) {
			t.Fatalf("JSON message %v", archived[1])
		}

		// Refusals: bad JSON, unknown channel, another tenant's key, a user
		// key in a read-only channel, an archived channel.
		post := func(key string, body map[string]any) *apptest.Response {
			return e.Do(t, "POST", "/api/connect/message/"+e.tenant, key, body)
		}
		if c := post(e.Key, map[string]any{"to": "ops", "body": "{nope", "body_type": "JSON"}).Expect(t, 400).Code(t); c != "validation_failed" {
			t.Fatalf("bad JSON code %s", c)
		}
		if c := post(e.Key, map[string]any{"to": "nope", "body": "x"}).Expect(t, 404).Code(t); c != "channel_not_found" {
			t.Fatalf("unknown channel code %s", c)
		}
		other := e.Tenant(t, "other")
		e.Do(t, "POST", "/api/tenants/"+other+"/chat_channels/", e.Key, map[string]any{"name": "ops"}).Expect(t, 201)
		otherKey := e.KeyFor(t, map[string]any{"tenant": other})
		post(otherKey, map[string]any{"to": "ops", "body": "cross"}).Expect(t, 403)
		// The other tenant's own "ops" is a different room.
		e.Do(t, "POST", "/api/connect/message/"+other, otherKey, map[string]any{"to": "ops", "body": "mine"}).Expect(t, 200)
		userKey := e.KeyFor(t, map[string]any{"tenant": e.tenant, "extension": "1001"})
		post(userKey, map[string]any{"to": "ops", "body": "as a user"}).Expect(t, 200)
		e.Do(t, "PUT", base+fmt.Sprint(ch["id"]), e.Key, map[string]any{"read_only": true}).Expect(t, 200)
		if c := post(userKey, map[string]any{"to": "ops", "body": "x"}).Expect(t, 403).Code(t); c != "channel_read_only" {
			t.Fatalf("read-only code %s", c)
		}
		// A named post comes from the sender-name account, which a
		// read-only room takes too.
		post(e.Key, map[string]any{"to": "ops", "body": "integration in read-only", "from_name": "CI bot"}).Expect(t, 200)
		e.Do(t, "PUT", base+fmt.Sprint(ch["id"]), e.Key, map[string]any{"archived": true}).Expect(t, 200)
		if c := post(e.Key, map[string]any{"to": "ops", "body": "x"}).Expect(t, 410).Code(t); c != "channel_is_archived" {
			t.Fatalf("archived code %s", c)
		}
		archived = e.archiveOf(t, cl, room+"@conference."+chatDomain, 4)
		for _, m := range archived {
			if strings.Contains(m, "cross") {
				t.Fatalf("cross-tenant post reached the room: %v", m)
			}
		}
		if len(archived) != 4 {
			t.Fatalf("archive after refusals has %d messages, want 4", len(archived))
		}
	})
}

func TestDirectMessageToOfflineUser(t *testing.T) {
	eachChatEnv(t, func(t *testing.T, e *chatEnv) {
		alice := e.provision(t, "1001")
		bob := e.provision(t, "1002")
		r := e.Do(t, "POST", "/api/connect/message/"+e.tenant, e.Key, map[string]any{"target": "user", "to": "1002", "from_ext": "1001", "body": "call me <now>"}).Expect(t, 200).Map(t)
		want := map[string]any{"status": "sent", "to": "1002", "target": "user", "jid": e.lower + "-1002@" + chatDomain, "from": e.lower + "-1001@" + chatDomain}
		for k, v := range want {
			if r[k] != v {
				t.Fatalf("answer %v, want %v", r, want)
			}
		}
		if len(r) != len(want) {
			t.Fatalf("answer has extra fields: %v", r)
		}
		n, err := e.chat.OfflineCount(context.Background(), e.lower+"-1002")
		if err != nil || n != 1 {
			t.Fatalf("offline count %d, %v", n, err)
		}
		cl := login(t, e, bob)
		if err := cl.Available(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, ok := cl.WaitMessage(10*time.Second, "call me &lt;now&gt;", `from="`+e.lower+`-1001@`+chatDomain); !ok {
			t.Fatalf("offline message not delivered at login; got %v", cl.Messages())
		}
		// Both users have it in their archive.
		for who, bundle := range map[string]map[string]any{"sender": alice, "recipient": bob} {
			c := cl
			if who == "sender" {
				c = login(t, e, bundle)
			}
			arch, err := c.Archive(context.Background(), "")
			if err != nil {
				t.Fatal(err)
			}
			if len(arch) != 1 || !strings.Contains(arch[0], "call me &lt;now&gt;") {
				t.Fatalf("%s archive %v", who, arch)
			}
		}
		// Unknown recipient, a user key sending as someone else, another tenant.
		if c := e.Do(t, "POST", "/api/connect/message/"+e.tenant, e.Key, map[string]any{"target": "user", "to": "1999", "from_ext": "1001", "body": "x"}).Expect(t, 404).Code(t); c != "user_not_found" {
			t.Fatalf("code %s", c)
		}
		userKey := e.KeyFor(t, map[string]any{"tenant": e.tenant, "extension": "1001"})
		e.Do(t, "POST", "/api/connect/message/"+e.tenant, userKey, map[string]any{"target": "user", "to": "1001", "from_ext": "1002", "body": "x"}).Expect(t, 403)
		r = e.Do(t, "POST", "/api/connect/message/"+e.tenant, userKey, map[string]any{"target": "user", "to": "1002", "body": "from my key"}).Expect(t, 200).Map(t)
		if r["from"] != e.lower+"-1001@"+chatDomain {
			t.Fatalf("user key sent as %v", r["from"])
		}
		otherKey := e.KeyFor(t, map[string]any{"tenant": e.Tenant(t, "other")})
		e.Do(t, "POST", "/api/connect/message/"+e.tenant, otherKey, map[string]any{"target": "user", "to": "1002", "from_ext": "1001", "body": "x"}).Expect(t, 403)
	})
}

// bundleFields checks a provisioning bundle has exactly the fields of the
// service interface's table, each a non-empty string.
func bundleFields(t *testing.T, b map[string]any) {
	t.Helper()
	want := map[string][]string{
		"":          {"status", "tenant", "extension", "connect", "sip", "endpoints"},
		"connect":   {"username", "jid", "domain", "password", "websocket_url", "login_url"},
		"sip":       {"extension", "auth_id", "password", "domain", "websocket_url"},
		"endpoints": {"management", "messaging", "reporting", "media", "connect_ws"},
	}
	for part, fields := range want {
		m := b
		if part != "" {
			m, _ = b[part].(map[string]any)
		}
		if len(m) != len(fields) {
			t.Errorf("bundle %q has fields %v, want exactly %v", part, m, fields)
		}
		for _, f := range fields {
			if _, isObj := want[f]; part == "" && isObj {
				continue
			}
			if v, _ := m[f].(string); v == "" {
				t.Errorf("bundle %s.%s = %v, want a non-empty string", part, f, m[f])
			}
		}
	}
}

func TestAgentProvisioningAndRotate(t *testing.T) {
	eachChatEnv(t, func(t *testing.T, e *chatEnv) {
		b := e.Do(t, "POST", "/api/connect/agent/"+e.tenant, e.Key, map[string]any{"extension": "2001", "first_name": "Ada", "sip_password": "sip-secret-2001-ok"}).Expect(t, 201).Map(t)
		conn, sip, ep := b["connect"].(map[string]any), b["sip"].(map[string]any), b["endpoints"].(map[string]any)
		base := e.Cfg.BaseURL
		checks := map[string][2]any{
			"status":                {b["status"], "provisioned"},
			"tenant":                {b["tenant"], e.tenant},
			"extension":             {b["extension"], "2001"},
			"connect.username":      {conn["username"], e.lower + "-2001"},
			"connect.jid":           {conn["jid"], e.lower + "-2001@" + chatDomain},
			"connect.domain":        {conn["domain"], chatDomain},
			"connect.websocket_url": {conn["websocket_url"], e.xmpp.WSURL},
			"connect.login_url":     {conn["login_url"], base + "/chat/?tenant=" + e.tenant},
			"sip.extension":         {sip["extension"], "2001"},
			"sip.auth_id":           {sip["auth_id"], "2001-" + e.tenant},
			"sip.password":          {sip["password"], "sip-secret-2001-ok"},
			"sip.domain":            {sip["domain"], "sip.test"},
			"sip.websocket_url":     {sip["websocket_url"], "wss://sip.test:7443"},
			"endpoints.management":  {ep["management"], base + "/api"},
			"endpoints.messaging":   {ep["messaging"], base + "/api/messaging"},
			"endpoints.reporting":   {ep["reporting"], base + "/api/reports"},
			"endpoints.media":       {ep["media"], base + "/"},
			"endpoints.connect_ws":  {ep["connect_ws"], e.xmpp.WSURL},
		}
		for name, c := range checks {
			if c[0] != c[1] {
				t.Errorf("%s = %v, want %v", name, c[0], c[1])
			}
		}
		bundleFields(t, b)
		pw, _ := conn["password"].(string)
		if len(pw) < 20 {
			t.Fatalf("generated chat password %q", pw)
		}
		ext := e.Do(t, "GET", "/api/tenants/"+e.tenant+"/extensions/2001", e.Key, nil).Expect(t, 200).Map(t)
		if ext["type"] != "ai_agent" || ext["first_name"] != "Ada" {
			t.Fatalf("extension %v", ext)
		}
		// Stored only hashed by us: SHA-256 for a generated password, bcrypt
		// for one the caller chose.
		stored := func(ext string) string {
			var hash string
			if err := e.Store.Querier().GetContext(context.Background(), &hash, "SELECT c.password_hash FROM chat_accounts c JOIN tenants t ON t.id = c.tenant_id WHERE t.tenant = ? AND c.extension = ?", e.tenant, ext); err != nil {
				t.Fatal(err)
			}
			return hash
		}
		if h := stored("2001"); !strings.HasPrefix(h, "sha256:") || strings.Contains(h, pw) {
			t.Fatalf("stored generated password %q", h)
		}
		login(t, e, b).Close()
		chosen := e.Do(t, "POST", "/api/connect/agent/"+e.tenant, e.Key, map[string]any{"extension": "2003", "chat_password": "my-own-chat-pass-1"}).Expect(t, 201).Map(t)
		if chosen["connect"].(map[string]any)["password"] != "my-own-chat-pass-1" {
			t.Fatalf("chosen password not used: %v", chosen)
		}
		if h := stored("2003"); !strings.HasPrefix(h, "$2") || strings.Contains(h, "my-own-chat-pass-1") {
			t.Fatalf("stored chosen password %q", h)
		}
		login(t, e, chosen).Close()

		again := e.Do(t, "POST", "/api/connect/agent/"+e.tenant, e.Key, map[string]any{"extension": "2001"}).Expect(t, 409).Map(t)
		if !strings.Contains(again["error"].(string), "/api/connect/agent/"+e.tenant+"/2001/rotate") {
			t.Fatalf("409 does not name the rotate endpoint: %v", again)
		}

		rot := e.Do(t, "POST", "/api/connect/agent/"+e.tenant+"/2001/rotate", e.Key, map[string]any{}).Expect(t, 200).Map(t)
		newPw := rot["connect"].(map[string]any)["password"].(string)
		if newPw == pw || rot["sip"].(map[string]any)["password"] != "sip-secret-2001-ok" || rot["status"] != "provisioned" {
			t.Fatalf("rotate answer %v", rot)
		}
		bundleFields(t, rot)
		login(t, e, rot).Close()
		if _, err := chattest.Login(context.Background(), e.xmpp.WSURL, e.lower+"-2001@"+chatDomain, pw); err == nil {
			t.Fatal("the old chat password still logs in after rotate")
		}
		e.Do(t, "POST", "/api/connect/agent/"+e.tenant+"/2999/rotate", e.Key, map[string]any{}).Expect(t, 404)
		e.Do(t, "POST", "/api/connect/agent/"+e.tenant+"/2001/rotate", e.Key, map[string]any{"x": 1}).Expect(t, 400)
		userKey := e.KeyFor(t, map[string]any{"tenant": e.tenant, "extension": "2001"})
		e.Do(t, "POST", "/api/connect/agent/"+e.tenant+"/2001/rotate", userKey, map[string]any{}).Expect(t, 403)
		otherKey := e.KeyFor(t, map[string]any{"tenant": e.Tenant(t, "other")})
		e.Do(t, "POST", "/api/connect/agent/"+e.tenant, otherKey, map[string]any{"extension": "2002"}).Expect(t, 403)
		e.Do(t, "POST", "/api/connect/agent/"+e.tenant, e.Key, map[string]any{"extension": "x1"}).Expect(t, 400)

		// Deleting the extension removes its chat account from ejabberd.
		e.Do(t, "DELETE", "/api/tenants/"+e.tenant+"/extensions/2003", e.Key, nil).Expect(t, 204)
		wait.Until(t, 20*time.Second, "account of a deleted extension unregistered", func() bool {
			ok, err := e.chat.CheckAccount(context.Background(), e.lower+"-2003")
			return err == nil && !ok
		})
		if ok, _ := e.chat.CheckAccount(context.Background(), e.lower+"-2001"); !ok {
			t.Fatal("deleting one extension removed another's chat account")
		}
	})
}

func TestChatServerOutage(t *testing.T) {
	eachChatEnv(t, func(t *testing.T, e *chatEnv) {
		t.Cleanup(func() {
			if t.Failed() { // what the queue did, for a failure seen only under load
				for _, l := range e.Logs.Lines(t) {
					if c, _ := l["component"].(string); strings.HasPrefix(c, "chat") {
						t.Logf("server log: %v", l)
					}
				}
				var rows []struct {
					Room, LastError string
					Attempts        int
				}
				_ = e.Store.Querier().SelectContext(context.Background(), &rows, "SELECT room, attempts, COALESCE(last_error, '') AS lasterror FROM chat_outbox")
				t.Logf("chat_outbox rows: %+v", rows)
				t.Logf("ejabberd log: %s", e.xmpp.LogTail())
			}
		})
		base := "/api/tenants/" + e.tenant + "/chat_channels/"
		e.Do(t, "POST", base, e.Key, map[string]any{"name": "general"}).Expect(t, 201)
		e.waitRoom(t, e.lower+"-general")
		agent := e.provision(t, "1001")
		e.waitMember(t, e.lower+"-general", e.lower+"-1001@"+chatDomain)

		before := e.Do(t, "POST", "/api/connect/message/"+e.tenant, e.Key, map[string]any{"to": "general", "body": "before the outage"}).Expect(t, 200).Map(t)
		if before["status"] != "sent" || len(before) != 3 {
			t.Fatalf("answer %v", before)
		}

		e.xmpp.Stop()
		// The server notices within about a second (its watch probes
		// ejabberd when nothing else reached it). A send it accepted before
		// noticing is posted once ejabberd is back; after that, sends
		// answer 503 and are not kept.
		var accepted []string
		wait.Until(t, 10*time.Second, "channel sends answer 503 during the outage", func() bool {
			body := fmt.Sprintf("during the outage %d", len(accepted))
			r := e.Do(t, "POST", "/api/connect/message/"+e.tenant, e.Key, map[string]any{"to": "general", "body": body})
			if r.Status == 200 {
				accepted = append(accepted, body)
				time.Sleep(200 * time.Millisecond)
				return false
			}
			if c := r.Expect(t, 503).Code(t); c != "chat_unavailable" {
				t.Fatalf("code %s", c)
			}
			return true
		})
		if r := e.Do(t, "POST", "/api/connect/message/"+e.tenant, e.Key, map[string]any{"to": "general", "body": "refused"}).Expect(t, 503); r.Header.Get("Retry-After") != "5" {
			t.Fatalf("Retry-After %q during the outage, want 5", r.Header.Get("Retry-After"))
		}
		e.Do(t, "POST", "/api/connect/message/"+e.tenant, e.Key, map[string]any{"target": "user", "to": "1001", "from_ext": "1001", "body": "hi"}).Expect(t, 503)
		e.Do(t, "POST", "/api/connect/agent/"+e.tenant, e.Key, map[string]any{"extension": "1002"}).Expect(t, 503)
		e.Do(t, "GET", "/api/tenants/"+e.tenant+"/extensions/1002", e.Key, nil).Expect(t, 404)
		ready := e.Do(t, "GET", "/readyz", "", nil).Expect(t, 200).Map(t)
		if state, _ := ready["checks"].(map[string]any)["chat"].(string); !strings.HasPrefix(state, "unreachable") {
			t.Fatalf("readyz chat = %q", state)
		}
		// Configuration writes still succeed and reach ejabberd once it is back.
		e.Do(t, "POST", base, e.Key, map[string]any{"name": "later", "visibility": "private", "members": []string{"1001"}}).Expect(t, 201)
		time.Sleep(1500 * time.Millisecond)
		e.xmpp.Restart()
		e.waitRoom(t, e.lower+"-later")
		e.waitMember(t, e.lower+"-later", e.lower+"-1001@"+chatDomain)
		e.Do(t, "POST", "/api/connect/message/"+e.tenant, e.Key, map[string]any{"to": "later", "body": "back"}).Expect(t, 200)

		// Everything accepted is in the archive, in order; nothing refused
		// is. A post the room could not confirm as ejabberd stopped is
		// posted again with the same id (at least once): a client shows
		// it once.
		cl := login(t, e, agent)
		want := append([]string{"before the outage"}, accepted...)
		got := onceEach(t, e.archiveOf(t, cl, e.lower+"-general@conference."+chatDomain, len(want)))
		if len(got) != len(want) {
			t.Fatalf("archive has %d messages, want %d: %v", len(got), len(want), got)
		}
		for i, m := range got {
			if !strings.Contains(m, ">"+want[i]+"</body>") {
				t.Fatalf("archive message %d = %s, want %q", i, m, want[i])
			}
		}
		e.archiveOf(t, cl, e.lower+"-later@conference."+chatDomain, 1)
	})
}

// originID matches the XEP-0359 origin-id a channel message carries.
var originID = regexp.MustCompile(`<origin-id xmlns="urn:xmpp:sid:0" id="([^"]+)"`)

// onceEach drops the repeats of archived messages, as a client does: a
// repeat has the id of a message before it.
func onceEach(t *testing.T, msgs []string) []string {
	t.Helper()
	seen := map[string]bool{}
	var out []string
	for _, m := range msgs {
		id := originID.FindStringSubmatch(m)
		if id == nil {
			t.Fatalf("archived message without an origin-id: %s", m)
		}
		if !seen[id[1]] {
			seen[id[1]] = true
			out = append(out, m)
		}
	}
	return out
}

// TestPrivateChannelKeepsNonMembersOut: a private channel's room on
// ejabberd holds only its members (members-only, affiliation member), a
// non-member's user key cannot post into it (403 not_in_channel) and its
// XMPP account cannot read the room's archive; read-only channels refuse
// user keys' posts and archived channels refuse every post.
func TestPrivateChannelKeepsNonMembersOut(t *testing.T) {
	eachChatEnv(t, func(t *testing.T, e *chatEnv) {
		base := "/api/tenants/" + e.tenant + "/chat_channels/"
		member, outsider := e.provision(t, "1001"), e.provision(t, "1002")
		ch := e.Do(t, "POST", base, e.Key, map[string]any{"name": "secret", "visibility": "private", "members": []string{"1001"}}).Expect(t, 201).Map(t)
		room := e.lower + "-secret"
		roomJID := room + "@conference." + chatDomain
		opts := e.waitRoom(t, room)
		if opts["members_only"] != "true" || opts["public"] != "false" {
			t.Fatalf("private channel's room options %v", opts)
		}
		e.waitMember(t, room, e.lower+"-1001@"+chatDomain)
		affs, err := e.chat.RoomAffiliations(context.Background(), room)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range affs {
			if a.Username == e.lower+"-1002" {
				t.Fatalf("non-member 1002 has affiliation %q in %s: %v", a.Affiliation, room, affs)
			}
		}

		post := func(key, body string) *apptest.Response {
			return e.Do(t, "POST", "/api/connect/message/"+e.tenant, key, map[string]any{"to": "secret", "body": body})
		}
		memberKey := e.KeyFor(t, map[string]any{"tenant": e.tenant, "extension": "1001"})
		outsiderKey := e.KeyFor(t, map[string]any{"tenant": e.tenant, "extension": "1002"})
		r := post(outsiderKey, "let me in").Expect(t, 403)
		if c := r.Code(t); c != "not_in_channel" {
			t.Fatalf("non-member's post: code %s", c)
		}
		if m := r.Map(t); !strings.Contains(m["error"].(string), "1002") || !strings.Contains(m["error"].(string), "secret") {
			t.Fatalf("non-member's post: error %v", m)
		}
		post(memberKey, "from a member").Expect(t, 200)
		post(e.Key, "from an integration").Expect(t, 200)

		// On ejabberd: the member reads both posts, the outsider's account
		// is refused the room's archive.
		got := e.archiveOf(t, login(t, e, member), roomJID, 2)
		if len(got) != 2 || !strings.Contains(got[0], "from a member") || !strings.Contains(got[1], "from an integration") {
			t.Fatalf("member's view of the archive %v", got)
		}
		if msgs, err := login(t, e, outsider).Archive(context.Background(), roomJID); err == nil {
			t.Fatalf("non-member read the private room's archive: %v", msgs)
		}

		// Read-only: members' user keys are refused, integrations post.
		e.Do(t, "PUT", base+fmt.Sprint(ch["id"]), e.Key, map[string]any{"read_only": true}).Expect(t, 200)
		if c := post(memberKey, "read-only?").Expect(t, 403).Code(t); c != "channel_read_only" {
			t.Fatalf("member in read-only channel: code %s", c)
		}
		if c := post(outsiderKey, "read-only?").Expect(t, 403).Code(t); c != "channel_read_only" && c != "not_in_channel" {
			t.Fatalf("non-member in read-only channel: code %s", c)
		}
		post(e.Key, "integration in read-only").Expect(t, 200)

		// Archived: every post is refused, and none is kept.
		e.Do(t, "PUT", base+fmt.Sprint(ch["id"]), e.Key, map[string]any{"archived": true}).Expect(t, 200)
		for _, key := range []string{e.Key, memberKey} {
			if c := post(key, "after archiving").Expect(t, 410).Code(t); c != "channel_is_archived" {
				t.Fatalf("archived channel: code %s", c)
			}
		}
		var queued int
		if err := e.Store.Querier().GetContext(context.Background(), &queued, "SELECT COUNT(*) FROM chat_outbox WHERE room = ? AND stanza LIKE ?", room, "%after archiving%"); err != nil || queued != 0 {
			t.Fatalf("posts to the archived channel queued: %d (%v)", queued, err)
		}
		got = e.archiveOf(t, login(t, e, member), roomJID, 3)
		if len(got) != 3 {
			t.Fatalf("archive after the refusals has %d messages, want 3: %v", len(got), got)
		}
	})
}

// TestChatSyncCommandRepairsWhatEjabberdLost: `switchboard chat sync`
// recreates a room ejabberd lost, restores a lost membership, removes a
// room the database does not have, and reports on stderr an account
// ejabberd lost (only a hash of its password is kept), which a rotate then
// recreates.
func TestChatSyncCommandRepairsWhatEjabberdLost(t *testing.T) {
	eachChatEnv(t, func(t *testing.T, e *chatEnv) {
		ctx := context.Background()
		base := "/api/tenants/" + e.tenant + "/chat_channels/"
		e.Do(t, "POST", base, e.Key, map[string]any{"name": "ops", "topic": "alerts"}).Expect(t, 201)
		agent := e.provision(t, "1001") // members name existing extensions
		e.Do(t, "POST", base, e.Key, map[string]any{"name": "inner", "visibility": "private", "members": []string{"1001"}}).Expect(t, 201)
		e.provision(t, "1002")
		ops, inner := e.lower+"-ops", e.lower+"-inner"
		user1001, user1002 := e.lower+"-1001", e.lower+"-1002"
		e.waitRoom(t, ops)
		e.waitMember(t, ops, user1002+"@"+chatDomain)
		e.waitMember(t, inner, user1001+"@"+chatDomain)

		// ejabberd loses a room, a membership and an account, and has a
		// room of the tenant that no channel names.
		if err := e.chat.DestroyRoom(ctx, ops); err != nil {
			t.Fatal(err)
		}
		if err := e.chat.SetAffiliation(ctx, inner, user1001+"@"+chatDomain, "none"); err != nil {
			t.Fatal(err)
		}
		if err := e.chat.Unregister(ctx, user1002); err != nil {
			t.Fatal(err)
		}
		stray := e.lower + "-stray"
		if err := e.chat.CreateRoom(ctx, stray, map[string]string{"persistent": "true"}); err != nil {
			t.Fatal(err)
		}

		var stdout, stderr strings.Builder
		env := map[string]string{
			"SWITCHBOARD_DATABASE_URL": e.Cfg.DatabaseURL,
			"SWITCHBOARD_SECRET_KEY":   apptest.TestSecretKey,
			"SWITCHBOARD_CHAT_API_URL": e.xmpp.APIURL,
			"SWITCHBOARD_CHAT_DOMAIN":  chatDomain,
		}
		err := app.Run(ctx, app.Env{Args: []string{"chat", "sync"}, Getenv: func(k string) string { return env[k] }, Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr})
		if err != nil {
			t.Fatalf("chat sync: %v\nstderr: %s", err, stderr.String())
		}
		if strings.TrimSpace(stdout.String()) != "chat server is in sync" {
			t.Fatalf("chat sync stdout %q", stdout.String())
		}
		if !strings.Contains(stderr.String(), "rotate its password") || !strings.Contains(stderr.String(), user1002) {
			t.Fatalf("chat sync did not report the lost account %s: stderr %q", user1002, stderr.String())
		}

		// The command's work, read straight from ejabberd.
		opts, err := e.chat.RoomOptions(ctx, ops)
		if err != nil || opts["persistent"] != "true" || opts["members_only"] != "true" || opts["mam"] != "true" {
			t.Fatalf("room %s after sync: %v %v", ops, opts, err)
		}
		memberOf := func(room, user string) bool {
			affs, err := e.chat.RoomAffiliations(ctx, room)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range affs {
				if a.Username == user && a.Affiliation == "member" {
					return true
				}
			}
			return false
		}
		if !memberOf(inner, user1001) || !memberOf(ops, user1001) {
			t.Fatalf("memberships of %s not restored", user1001)
		}
		rooms, err := e.chat.Rooms(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rooms {
			if r == stray {
				t.Fatalf("room %s that no channel names is still on ejabberd", stray)
			}
		}
		if ok, err := e.chat.CheckAccount(ctx, user1001); err != nil || !ok {
			t.Fatalf("account %s: %v %v", user1001, ok, err)
		}
		// The member posts and reads the recreated room again. (A probe of
		// the server's that timed out while the sync kept ejabberd busy
		// answers 503 for about a second: posts are refused, not kept.)
		wait.Until(t, 10*time.Second, "a post into the recreated room", func() bool {
			r := e.Do(t, "POST", "/api/connect/message/"+e.tenant, e.Key, map[string]any{"to": "ops", "body": "after the sync"})
			if r.Status == 503 && r.Code(t) == "chat_unavailable" {
				time.Sleep(200 * time.Millisecond)
				return false
			}
			r.Expect(t, 200)
			return true
		})
		if got := e.archiveOf(t, login(t, e, agent), ops+"@conference."+chatDomain, 1); !strings.Contains(got[len(got)-1], "after the sync") {
			t.Fatalf("recreated room's archive %v", got)
		}
		// The lost account comes back with a rotate, in its rooms.
		b := e.Do(t, "POST", "/api/connect/agent/"+e.tenant+"/1002/rotate", e.Key, map[string]any{}).Expect(t, 200).Map(t)
		login(t, e, b)
		e.waitMember(t, ops, user1002+"@"+chatDomain)
	})
}

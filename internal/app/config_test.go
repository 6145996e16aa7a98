package app

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestLoadConfigDefaults(t *testing.T) {
	cfg, err := LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Listen != ":8080" || cfg.DatabaseURL != "sqlite:data/switchboard.db" || cfg.RedisURL != "" || cfg.ESLPassword != "ClueCon" {
		t.Errorf("defaults: %+v", cfg)
	}
	if m := cfg.Media; m.MaxPromptDuration != 10*time.Minute || m.MaxDuration != 2*time.Hour || m.MaxStoredBytes != 256<<20 {
		t.Errorf("media limits: %+v", m)
	}
}

func TestLoadConfigNamesTheBadVariable(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"listen", map[string]string{"SWITCHBOARD_LISTEN": "8080"}, "SWITCHBOARD_LISTEN"},
		{"database", map[string]string{"SWITCHBOARD_DATABASE_URL": "postgres://x"}, "SWITCHBOARD_DATABASE_URL"},
		{"redis", map[string]string{"SWITCHBOARD_REDIS_URL": "http://x"}, "SWITCHBOARD_REDIS_URL"},
		{"base url", map[string]string{"SWITCHBOARD_BASE_URL": "ftp://x"}, "SWITCHBOARD_BASE_URL"},
		{"log level", map[string]string{"SWITCHBOARD_LOG_LEVEL": "loud"}, "SWITCHBOARD_LOG_LEVEL"},
		{"secret key", map[string]string{"SWITCHBOARD_SECRET_KEY": "short"}, "SWITCHBOARD_SECRET_KEY"},
		{"mysql without key", map[string]string{"SWITCHBOARD_DATABASE_URL": "mysql://u:p@h/db"}, "SWITCHBOARD_SECRET_KEY"},
		{"allow list", map[string]string{"SWITCHBOARD_XMLCURL_ALLOW": "10.0.0.0/33"}, "SWITCHBOARD_XMLCURL_ALLOW"},
		{"half basic", map[string]string{"SWITCHBOARD_XMLCURL_USER": "fs"}, "SWITCHBOARD_XMLCURL_PASSWORD"},
		{"chat api url", map[string]string{"SWITCHBOARD_CHAT_API_URL": "127.0.0.1:5281", "SWITCHBOARD_CHAT_DOMAIN": "c.test"}, "SWITCHBOARD_CHAT_API_URL"},
		{"chat without domain", map[string]string{"SWITCHBOARD_CHAT_API_URL": "http://127.0.0.1:5281/api"}, "SWITCHBOARD_CHAT_DOMAIN"},
		{"chat ws url", map[string]string{"SWITCHBOARD_CHAT_API_URL": "http://127.0.0.1:5281/api", "SWITCHBOARD_CHAT_DOMAIN": "c.test", "SWITCHBOARD_CHAT_WS_URL": "http://x/ws"}, "SWITCHBOARD_CHAT_WS_URL"},
		{"provider hosts", map[string]string{"SWITCHBOARD_EGRESS_ALLOWED_HOSTS": "kannel.example.net,http://x/"}, "SWITCHBOARD_EGRESS_ALLOWED_HOSTS"},
		{"provider nets", map[string]string{"SWITCHBOARD_EGRESS_ALLOWED_NETS": "10.0.0.0/33"}, "SWITCHBOARD_EGRESS_ALLOWED_NETS"},
		{"prompt duration", map[string]string{"SWITCHBOARD_MEDIA_MAX_PROMPT_DURATION": "ten minutes"}, "SWITCHBOARD_MEDIA_MAX_PROMPT_DURATION"},
		{"media duration", map[string]string{"SWITCHBOARD_MEDIA_MAX_DURATION": "0s"}, "SWITCHBOARD_MEDIA_MAX_DURATION"},
		{"stored bytes", map[string]string{"SWITCHBOARD_MEDIA_MAX_STORED_BYTES": "-1"}, "SWITCHBOARD_MEDIA_MAX_STORED_BYTES"},
		{"recordings mount", map[string]string{"SWITCHBOARD_RECORDINGS_MOUNT": "mnt/recordings"}, "SWITCHBOARD_RECORDINGS_MOUNT"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadConfig(func(k string) string { return tc.env[k] })
			if err == nil || !strings.HasPrefix(err.Error(), tc.want+":") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want one line starting with %s:", err, tc.want)
			}
		})
	}
}

func TestLoadConfigChat(t *testing.T) {
	cfg, err := LoadConfig(func(k string) string {
		return map[string]string{"SWITCHBOARD_CHAT_API_URL": "http://127.0.0.1:5281/api/", "SWITCHBOARD_CHAT_DOMAIN": "Chat.Example", "SWITCHBOARD_SIP_DOMAIN": "sip.example"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ChatAPIURL != "http://127.0.0.1:5281/api" || cfg.ChatDomain != "chat.example" || cfg.ChatMUCDomain != "conference.chat.example" || cfg.SIPWSURL != "wss://sip.example:7443" || cfg.SIPWSPort != 5066 || cfg.SIPWSSPort != 7443 {
		t.Fatalf("chat config %+v", cfg)
	}
}

// TestSIPWebSocketURLIsSecureUnlessLoopback: browsers get wss:// (the
// wss-binding rendered on the internal profile) for any SIP domain but a
// loopback one, where the plain ws-binding is enough; an explicit URL or
// port wins.
func TestSIPWebSocketURLIsSecureUnlessLoopback(t *testing.T) {
	for _, tc := range []struct {
		env     map[string]string
		url     string
		wssPort int
	}{
		{map[string]string{"SWITCHBOARD_SIP_DOMAIN": "pbx.example.net"}, "wss://pbx.example.net:7443", 7443},
		{map[string]string{"SWITCHBOARD_SIP_DOMAIN": "203.0.113.7"}, "wss://203.0.113.7:7443", 7443},
		{map[string]string{"SWITCHBOARD_SIP_DOMAIN": "pbx.example.net", "SWITCHBOARD_SIP_WSS_PORT": "8443"}, "wss://pbx.example.net:8443", 8443},
		{map[string]string{"SWITCHBOARD_SIP_DOMAIN": "localhost"}, "ws://localhost:5066", 0},
		{map[string]string{"SWITCHBOARD_SIP_DOMAIN": "127.0.0.1", "SWITCHBOARD_SIP_WS_PORT": "5070"}, "ws://127.0.0.1:5070", 0},
		{map[string]string{"SWITCHBOARD_SIP_DOMAIN": "localhost", "SWITCHBOARD_SIP_WSS_PORT": "7443"}, "wss://localhost:7443", 7443},
		{map[string]string{"SWITCHBOARD_SIP_DOMAIN": "pbx.example.net", "SWITCHBOARD_SIP_WS_URL": "wss://pbx.example.net/sip"}, "wss://pbx.example.net/sip", 7443},
	} {
		cfg, err := LoadConfig(func(k string) string { return tc.env[k] })
		if err != nil {
			t.Fatalf("%v: %v", tc.env, err)
		}
		if cfg.SIPWSURL != tc.url || cfg.SIPWSSPort != tc.wssPort {
			t.Errorf("%v: websocket URL %q, wss port %d; want %q, %d", tc.env, cfg.SIPWSURL, cfg.SIPWSSPort, tc.url, tc.wssPort)
		}
	}
	if _, err := LoadConfig(func(k string) string {
		return map[string]string{"SWITCHBOARD_SIP_DOMAIN": "pbx.example.net", "SWITCHBOARD_SIP_WSS_PORT": "x"}[k]
	}); err == nil || !strings.HasPrefix(err.Error(), "SWITCHBOARD_SIP_WSS_PORT:") {
		t.Fatalf("bad wss port: %v", err)
	}
}

// Seen item 8: the embedded Redis had no password, so any local process
// could plant /fs/xml documents in it.
func TestEmbeddedRedisNeedsItsPassword(t *testing.T) {
	cfg, err := LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	rdb, stop, err := openRedis(t.Context(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := rdb.Set(t.Context(), "sb:probe", "ours", 0).Err(); err != nil {
		t.Fatalf("the server's own client: %v", err)
	}
	addr := rdb.(*redis.Client).Options().Addr
	intruder := redis.NewClient(&redis.Options{Addr: addr})
	defer intruder.Close()
	if err := intruder.Set(t.Context(), "sb:xml:planted", "<document/>", 0).Err(); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Fatalf("a client without the password wrote: err=%v", err)
	}
	if _, err := intruder.Get(t.Context(), "sb:probe").Result(); err == nil {
		t.Fatal("a client without the password read")
	}
}

// The embedded Redis expires keys in real time (miniredis does only when
// told), so idempotency markers and rate-limit blocks end.
func TestEmbeddedRedisExpiresKeys(t *testing.T) {
	cfg, err := LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	rdb, stop, err := openRedis(t.Context(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if err := rdb.Set(t.Context(), "sb:short", "1", 500*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond)
	if n, err := rdb.Exists(t.Context(), "sb:short").Result(); err != nil || n != 0 {
		t.Fatalf("key with a 500 ms TTL still there after 2.5 s: n=%d err=%v", n, err)
	}
}

// Package app wires Switchboard together: configuration from the
// environment, the database and Redis (real or embedded), the HTTP server,
// the FreeSWITCH pool, and the command line. It holds no business logic.
package app

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard/switchboard/internal/platform/redisurl"
	"github.com/switchboard/switchboard/internal/web/routes"
)

// Config is everything Switchboard reads from the environment.
type Config struct {
	Listen       string // SWITCHBOARD_LISTEN
	DatabaseURL  string // SWITCHBOARD_DATABASE_URL
	RedisURL     string // SWITCHBOARD_REDIS_URL; "" starts an embedded server
	BaseURL      string // SWITCHBOARD_BASE_URL
	LogLevel     slog.Level
	LogFormat    string // json or text
	SecretKey    []byte // SWITCHBOARD_SECRET_KEY
	SIPDomain    string // SWITCHBOARD_SIP_DOMAIN
	XMLCurlUser  string
	XMLCurlPass  string
	XMLCurlAllow []*net.IPNet
	ESLNodes     string // SWITCHBOARD_ESL_NODES
	ESLPassword  string // SWITCHBOARD_ESL_PASSWORD
	Recordings   string // SWITCHBOARD_RECORDINGS_DIR
	// StreamsPerKey caps the open event streams per API key and replica
	// (SWITCHBOARD_SSE_STREAMS_PER_KEY).
	StreamsPerKey int
	// XMLAccessLog is which /fs/xml fetches get a log line
	// (SWITCHBOARD_XML_ACCESS_LOG, SWITCHBOARD_XML_SLOW_FETCH).
	XMLAccessLog routes.XMLAccessLog
	TwilioURL    string // SWITCHBOARD_TWILIO_URL
	MetaURL      string // SWITCHBOARD_META_URL
	BodyLimit    int
	ShutdownWait time.Duration
	// Team chat (ejabberd); ChatAPIURL "" means no chat server.
	ChatAPIURL    string // SWITCHBOARD_CHAT_API_URL
	ChatDomain    string // SWITCHBOARD_CHAT_DOMAIN
	ChatMUCDomain string // SWITCHBOARD_CHAT_MUC_DOMAIN
	ChatWSURL     string // SWITCHBOARD_CHAT_WS_URL
	SIPWSURL      string // SWITCHBOARD_SIP_WS_URL
	SIPWSPort     int    // SWITCHBOARD_SIP_WS_PORT: sofia ws-binding on internal profiles (0 = none)
	SIPWSSPort    int    // SWITCHBOARD_SIP_WSS_PORT: sofia wss-binding on internal profiles (0 = none)
	// Rate limits (0 disables): requests per second and burst per
	// credential, failed authentications per minute per client address.
	RateLimit, RateBurst, AuthFailureLimit, AccountFailureLimit int
	// SessionIdle and SessionMax end administrators' browser sessions
	// after this long unused, and this long after sign-in.
	SessionIdle, SessionMax time.Duration // SWITCHBOARD_SESSION_IDLE, SWITCHBOARD_SESSION_MAX
	// MetricsListen, when set, serves /metrics there without credentials
	// instead of on the API listener behind platform credentials.
	MetricsListen string // SWITCHBOARD_METRICS_LISTEN
	// Click-to-call captcha: the provider's siteverify URL and this
	// site's secret (unset: widgets that require a captcha answer 501).
	CaptchaVerifyURL string // SWITCHBOARD_CAPTCHA_VERIFY_URL
	CaptchaSecret    string // SWITCHBOARD_CAPTCHA_SECRET
	// Outbound webhooks: private targets and plain http (development and
	// tests), failures before auto-disable, first retry delay.
	WebhookAllowPrivate bool          // SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE
	WebhookAllowHTTP    bool          // SWITCHBOARD_WEBHOOK_ALLOW_HTTP
	WebhookDisableAfter int           // SWITCHBOARD_WEBHOOK_DISABLE_AFTER
	WebhookRetryMin     time.Duration // SWITCHBOARD_WEBHOOK_RETRY_MIN
	// ServerDownAfter is how long a node's event socket stays lost before
	// server.down is reported (SWITCHBOARD_SERVER_DOWN_AFTER).
	ServerDownAfter time.Duration
	// OutboxGroup, when set, keeps this server's outbox lease and
	// subscriber progress apart from other servers on the same database.
	// Replicas of one installation leave it empty; test servers that share
	// a database but not FreeSWITCH nodes set it.
	OutboxGroup string
	// Media is the media library (app/media.go).
	Media MediaConfig
	Fax   FaxConfig
	// Egress is what provider URLs tenants name may reach (app/egress.go).
	Egress EgressConfig
}

// envVar documents one variable; the README table is written from the same facts.
type envVar struct {
	Name, Default, Doc string
}

// Variables lists every environment variable Switchboard reads.
var Variables = []envVar{
	{"SWITCHBOARD_LISTEN", ":8080", "HTTP listen address"},
	{"SWITCHBOARD_DATABASE_URL", "sqlite:data/switchboard.db", "mysql://user:pass@host:3306/db or sqlite:path/file.db"},
	{"SWITCHBOARD_REDIS_URL", "(embedded)", "redis://host:6379/0; unset starts an in-process Redis-compatible server"},
	{"SWITCHBOARD_BASE_URL", "http://localhost:8080", "public base URL used in links and provisioning bundles"},
	{"SWITCHBOARD_LOG_LEVEL", "info", "debug, info, warn or error"},
	{"SWITCHBOARD_LOG_FORMAT", "json", "json or text"},
	{"SWITCHBOARD_SECRET_KEY", "(file next to a SQLite database)", "32 bytes, hex or base64: encrypts SIP secrets and trunk passwords; required with MySQL"},
	{"SWITCHBOARD_SIP_DOMAIN", "(host name)", "the installation's SIP domain"},
	{"SWITCHBOARD_XMLCURL_USER", "", "HTTP Basic user FreeSWITCH's mod_xml_curl sends"},
	{"SWITCHBOARD_XMLCURL_PASSWORD", "", "HTTP Basic password for /fs/xml"},
	{"SWITCHBOARD_XMLCURL_ALLOW", "", "CIDRs allowed to fetch /fs/xml (with neither set: loopback only)"},
	{"SWITCHBOARD_ESL_NODES", "", "FreeSWITCH event sockets: host:port or password@host:port, comma-separated"},
	{"SWITCHBOARD_ESL_PASSWORD", "ClueCon", "default event socket password"},
	{"SWITCHBOARD_RECORDINGS_DIR", "/var/lib/freeswitch/recordings", "directory (on the FreeSWITCH nodes) where the record endpoint writes"},
	{"SWITCHBOARD_XML_ACCESS_LOG", "0", "share of /fs/xml fetches logged at info, 0 to 1 (errors, refused credentials and slow fetches are always logged; every fetch is counted in the metrics)"},
	{"SWITCHBOARD_XML_SLOW_FETCH", "100ms", "an /fs/xml fetch answered slower than this is logged at warn (0 = never)"},
	{"SWITCHBOARD_SSE_STREAMS_PER_KEY", "10", "open /api/telephony/events streams allowed per API key and replica (more answer 429)"},
	{"SWITCHBOARD_TWILIO_URL", "https://api.twilio.com", "Twilio API base URL (tests point it at a local fake)"},
	{"SWITCHBOARD_META_URL", "https://graph.facebook.com/v21.0", "WhatsApp Cloud API base URL, with the Graph API version"},
	{"SWITCHBOARD_CHAT_API_URL", "", "ejabberd mod_http_api URL (http://127.0.0.1:5281/api); unset: no chat server"},
	{"SWITCHBOARD_CHAT_DOMAIN", "", "XMPP domain of chat users (required with the API URL)"},
	{"SWITCHBOARD_CHAT_MUC_DOMAIN", "conference.<domain>", "XMPP service of chat rooms"},
	{"SWITCHBOARD_CHAT_WS_URL", "", "XMPP WebSocket URL chat clients use (wss://chat.example.net/ws)"},
	{"SWITCHBOARD_SIP_WS_PORT", "5066", "SIP over WebSocket (ws-binding) port rendered on every internal sofia profile (0 = none)"},
	{"SWITCHBOARD_SIP_WSS_PORT", "7443 (0 on a loopback SIP domain)", "SIP over secure WebSocket (wss-binding) port rendered on every internal sofia profile (0 = none; the node needs its wss.pem)"},
	{"SWITCHBOARD_SIP_WS_URL", "wss://<SIP domain>:<wss port>, or ws://<SIP domain>:<ws port> on loopback", "SIP WebSocket URL in agent provisioning bundles and web-phone sessions"},
	{"SWITCHBOARD_RATE_LIMIT", "100", "requests per second per API key or administrator, shared by all replicas (0 = off)"},
	{"SWITCHBOARD_RATE_BURST", "200", "requests a credential may send at once above the rate"},
	{"SWITCHBOARD_AUTH_FAILURE_LIMIT", "10", "failed authentications per minute per client address before 429 (0 = off)"},
	{"SWITCHBOARD_ACCOUNT_FAILURE_LIMIT", "20", "failed sign-ins per 15 minutes per administrator before sign-ins to it from addresses it never signed in from get 429 (0 = off)"},
	{"SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE", "false", "let outbound webhooks reach loopback, private and link-local addresses (development only)"},
	{"SWITCHBOARD_WEBHOOK_ALLOW_HTTP", "false", "accept plain http:// webhook URLs (development only)"},
	{"SWITCHBOARD_WEBHOOK_DISABLE_AFTER", "20", "consecutive failed webhook attempts before the webhook is disabled"},
	{"SWITCHBOARD_WEBHOOK_RETRY_MIN", "1s", "first webhook retry delay (doubled per attempt, with jitter, up to 10 minutes)"},
	{"SWITCHBOARD_SERVER_DOWN_AFTER", "30s", "a FreeSWITCH node whose event socket stays lost this long is reported server.down to system webhooks"},
	{"SWITCHBOARD_SESSION_IDLE", "30m", "administrators' browser sessions end after this long without a request (Go duration)"},
	{"SWITCHBOARD_SESSION_MAX", "12h", "and this long after sign-in whatever their use"},
	{"SWITCHBOARD_METRICS_LISTEN", "", "separate listen address for /metrics without credentials (unset: /metrics on the API listener, platform credentials)"},
}

// LoadConfig reads the environment. A bad value is an error naming the variable.
func LoadConfig(getenv func(string) string) (Config, error) {
	get := func(name, def string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		return def
	}
	host, _ := os.Hostname()
	c := Config{
		Listen:      get("SWITCHBOARD_LISTEN", ":8080"),
		DatabaseURL: get("SWITCHBOARD_DATABASE_URL", "sqlite:data/switchboard.db"),
		RedisURL:    get("SWITCHBOARD_REDIS_URL", ""),
		BaseURL:     strings.TrimRight(get("SWITCHBOARD_BASE_URL", "http://localhost:8080"), "/"),
		LogFormat:   get("SWITCHBOARD_LOG_FORMAT", "json"),
		SIPDomain:   get("SWITCHBOARD_SIP_DOMAIN", host),
		XMLCurlUser: get("SWITCHBOARD_XMLCURL_USER", ""),
		XMLCurlPass: get("SWITCHBOARD_XMLCURL_PASSWORD", ""),
		ESLNodes:    get("SWITCHBOARD_ESL_NODES", ""),
		ESLPassword: get("SWITCHBOARD_ESL_PASSWORD", "ClueCon"),
		Recordings:  get("SWITCHBOARD_RECORDINGS_DIR", "/var/lib/freeswitch/recordings"),
		TwilioURL:   strings.TrimRight(get("SWITCHBOARD_TWILIO_URL", "https://api.twilio.com"), "/"),
		MetaURL:     strings.TrimRight(get("SWITCHBOARD_META_URL", "https://graph.facebook.com/v21.0"), "/"),
		// 1.5 MiB: a 1 MiB picture (webhook avatars) is 1.4 MB as the
		// base64 data: URL the API takes.
		BodyLimit:        3 << 19,
		ShutdownWait:     15 * time.Second,
		MetricsListen:    get("SWITCHBOARD_METRICS_LISTEN", ""),
		CaptchaVerifyURL: get("SWITCHBOARD_CAPTCHA_VERIFY_URL", ""),
		CaptchaSecret:    get("SWITCHBOARD_CAPTCHA_SECRET", ""),
	}
	for _, v := range []struct {
		name string
		def  int
		dst  *int
	}{
		{"SWITCHBOARD_RATE_LIMIT", 100, &c.RateLimit},
		{"SWITCHBOARD_RATE_BURST", 200, &c.RateBurst},
		{"SWITCHBOARD_AUTH_FAILURE_LIMIT", 10, &c.AuthFailureLimit},
		{"SWITCHBOARD_ACCOUNT_FAILURE_LIMIT", 20, &c.AccountFailureLimit},
		{"SWITCHBOARD_WEBHOOK_DISABLE_AFTER", 20, &c.WebhookDisableAfter},
	} {
		n, err := strconv.Atoi(get(v.name, strconv.Itoa(v.def)))
		if err != nil || n < 0 || n > 1000000 {
			return c, fmt.Errorf("%s: must be a whole number from 0 to 1000000", v.name)
		}
		*v.dst = n
	}
	if f, err := strconv.ParseFloat(get("SWITCHBOARD_XML_ACCESS_LOG", "0"), 64); err != nil || f < 0 || f > 1 {
		return c, fmt.Errorf("SWITCHBOARD_XML_ACCESS_LOG: must be a share from 0 to 1 (0.01 logs one fetch in a hundred)")
	} else {
		c.XMLAccessLog.Sample = f
	}
	if d, err := time.ParseDuration(get("SWITCHBOARD_XML_SLOW_FETCH", "100ms")); err != nil || d < 0 {
		return c, fmt.Errorf("SWITCHBOARD_XML_SLOW_FETCH: must be a duration like 100ms (0 = never)")
	} else {
		c.XMLAccessLog.Slow = d
	}
	if n, err := strconv.Atoi(get("SWITCHBOARD_SSE_STREAMS_PER_KEY", "10")); err != nil || n < 1 || n > 10000 {
		return c, fmt.Errorf("SWITCHBOARD_SSE_STREAMS_PER_KEY: must be a number from 1 to 10000")
	} else {
		c.StreamsPerKey = n
	}
	for name, dst := range map[string]*bool{"SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE": &c.WebhookAllowPrivate, "SWITCHBOARD_WEBHOOK_ALLOW_HTTP": &c.WebhookAllowHTTP} {
		b, err := strconv.ParseBool(get(name, "false"))
		if err != nil {
			return c, fmt.Errorf("%s: must be true or false", name)
		}
		*dst = b
	}
	if d, err := time.ParseDuration(get("SWITCHBOARD_WEBHOOK_RETRY_MIN", "1s")); err != nil || d < time.Millisecond || d > time.Hour {
		return c, fmt.Errorf("SWITCHBOARD_WEBHOOK_RETRY_MIN: must be a duration from 1ms to 1h")
	} else {
		c.WebhookRetryMin = d
	}
	for _, v := range []struct {
		name, def string
		dst       *time.Duration
	}{
		{"SWITCHBOARD_SESSION_IDLE", "30m", &c.SessionIdle},
		{"SWITCHBOARD_SESSION_MAX", "12h", &c.SessionMax},
		{"SWITCHBOARD_SERVER_DOWN_AFTER", "30s", &c.ServerDownAfter},
	} {
		d, err := time.ParseDuration(get(v.name, v.def))
		if err != nil || d < time.Second || d > 30*24*time.Hour {
			return c, fmt.Errorf("%s: must be a duration from 1s to 720h, such as 30m or 12h", v.name)
		}
		*v.dst = d
	}
	if c.SessionIdle > c.SessionMax {
		return c, fmt.Errorf("SWITCHBOARD_SESSION_IDLE: must not exceed SWITCHBOARD_SESSION_MAX")
	}
	c.ChatAPIURL = strings.TrimRight(get("SWITCHBOARD_CHAT_API_URL", ""), "/")
	c.ChatDomain = strings.ToLower(get("SWITCHBOARD_CHAT_DOMAIN", ""))
	c.ChatMUCDomain = strings.ToLower(get("SWITCHBOARD_CHAT_MUC_DOMAIN", ""))
	c.ChatWSURL = get("SWITCHBOARD_CHAT_WS_URL", "")
	if n, err := strconv.Atoi(get("SWITCHBOARD_SIP_WS_PORT", "5066")); err != nil || n < 0 || n > 65535 {
		return c, fmt.Errorf("SWITCHBOARD_SIP_WS_PORT: must be a port number (0 = no WebSocket binding)")
	} else {
		c.SIPWSPort = n
	}
	// Browsers reach FreeSWITCH over TLS (wss-binding) except on a
	// loopback SIP domain (development), where plain ws is enough.
	loopback := isLoopbackHost(c.SIPDomain)
	defWSS := "7443"
	if loopback {
		defWSS = "0"
	}
	if n, err := strconv.Atoi(get("SWITCHBOARD_SIP_WSS_PORT", defWSS)); err != nil || n < 0 || n > 65535 {
		return c, fmt.Errorf("SWITCHBOARD_SIP_WSS_PORT: must be a port number (0 = no secure WebSocket binding)")
	} else {
		c.SIPWSSPort = n
	}
	// The bundle's URL points at the binding rendered on the profile
	// unless the operator names another (a TLS proxy, a server's wss_port).
	defWS := "wss://" + c.SIPDomain + ":7443"
	switch {
	case c.SIPWSSPort > 0:
		defWS = "wss://" + c.SIPDomain + ":" + strconv.Itoa(c.SIPWSSPort)
	case c.SIPWSPort > 0 && loopback:
		defWS = "ws://" + c.SIPDomain + ":" + strconv.Itoa(c.SIPWSPort)
	}
	c.SIPWSURL = get("SWITCHBOARD_SIP_WS_URL", defWS)
	if u, err := url.Parse(c.SIPWSURL); err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
		return c, fmt.Errorf("SWITCHBOARD_SIP_WS_URL: must be a ws:// or wss:// URL")
	}
	if err := c.checkChat(); err != nil {
		return c, err
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return c, fmt.Errorf("SWITCHBOARD_LISTEN: %q is not host:port", c.Listen)
	}
	if c.MetricsListen != "" {
		if _, _, err := net.SplitHostPort(c.MetricsListen); err != nil {
			return c, fmt.Errorf("SWITCHBOARD_METRICS_LISTEN: %q is not host:port", c.MetricsListen)
		}
	}
	if !strings.HasPrefix(c.DatabaseURL, "mysql://") && !strings.HasPrefix(c.DatabaseURL, "sqlite:") {
		return c, fmt.Errorf("SWITCHBOARD_DATABASE_URL: must start with mysql:// or sqlite:")
	}
	if c.RedisURL != "" {
		rdb, err := redisurl.Open(c.RedisURL)
		if err != nil {
			return c, fmt.Errorf("SWITCHBOARD_REDIS_URL: %v", err)
		}
		rdb.Close() // only parsed here; openRedis connects
	}
	if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, fmt.Errorf("SWITCHBOARD_BASE_URL: must be an http(s) URL")
	}
	for name, v := range map[string]string{"SWITCHBOARD_TWILIO_URL": c.TwilioURL, "SWITCHBOARD_META_URL": c.MetaURL} {
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return c, fmt.Errorf("%s: must be an http(s) URL", name)
		}
	}
	if err := c.LogLevel.UnmarshalText([]byte(get("SWITCHBOARD_LOG_LEVEL", "info"))); err != nil {
		return c, fmt.Errorf("SWITCHBOARD_LOG_LEVEL: must be debug, info, warn or error")
	}
	if c.LogFormat != "json" && c.LogFormat != "text" {
		return c, fmt.Errorf("SWITCHBOARD_LOG_FORMAT: must be json or text")
	}
	if k := get("SWITCHBOARD_SECRET_KEY", ""); k != "" {
		key, err := decodeKey(k)
		if err != nil {
			return c, fmt.Errorf("SWITCHBOARD_SECRET_KEY: %v", err)
		}
		c.SecretKey = key
	} else if strings.HasPrefix(c.DatabaseURL, "mysql://") {
		return c, fmt.Errorf("SWITCHBOARD_SECRET_KEY: required with a MySQL database (32 bytes, hex or base64; e.g. openssl rand -hex 32)")
	}
	if allow := get("SWITCHBOARD_XMLCURL_ALLOW", ""); allow != "" {
		for _, cidr := range strings.Split(allow, ",") {
			_, n, err := net.ParseCIDR(strings.TrimSpace(cidr))
			if err != nil {
				return c, fmt.Errorf("SWITCHBOARD_XMLCURL_ALLOW: %q is not a CIDR", cidr)
			}
			c.XMLCurlAllow = append(c.XMLCurlAllow, n)
		}
	}
	media, err := loadMediaConfig(get, c.BaseURL)
	if err != nil {
		return c, err
	}
	c.Media = media
	if c.Fax, err = loadFaxConfig(get); err != nil {
		return c, err
	}
	if c.Egress, err = loadEgressConfig(get); err != nil {
		return c, err
	}
	if (c.XMLCurlUser == "") != (c.XMLCurlPass == "") {
		return c, fmt.Errorf("SWITCHBOARD_XMLCURL_PASSWORD: set both SWITCHBOARD_XMLCURL_USER and SWITCHBOARD_XMLCURL_PASSWORD, or neither")
	}
	return c, nil
}

// checkChat validates the chat server settings.
func (c *Config) checkChat() error {
	if c.ChatAPIURL == "" {
		return nil
	}
	if u, err := url.Parse(c.ChatAPIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("SWITCHBOARD_CHAT_API_URL: must be an http(s) URL such as http://127.0.0.1:5281/api")
	}
	if c.ChatDomain == "" || strings.ContainsAny(c.ChatDomain, "@/ ") {
		return fmt.Errorf("SWITCHBOARD_CHAT_DOMAIN: required with SWITCHBOARD_CHAT_API_URL: the XMPP domain (e.g. chat.example.net)")
	}
	if c.ChatMUCDomain == "" {
		c.ChatMUCDomain = "conference." + c.ChatDomain
	}
	if c.ChatWSURL != "" {
		if u, err := url.Parse(c.ChatWSURL); err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
			return fmt.Errorf("SWITCHBOARD_CHAT_WS_URL: must be a ws:// or wss:// URL")
		}
	}
	return nil
}

func decodeKey(s string) ([]byte, error) {
	if b, err := hex.DecodeString(s); err == nil && len(b) == 32 {
		return b, nil
	}
	if b, err := base64.StdEncoding.DecodeString(s); err == nil && len(b) == 32 {
		return b, nil
	}
	return nil, fmt.Errorf("must be 32 bytes as 64 hex digits or base64")
}

// isLoopbackHost reports whether host names this machine only
// (localhost, 127.0.0.0/8, ::1).
func isLoopbackHost(host string) bool {
	host = strings.Trim(strings.ToLower(host), "[]")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

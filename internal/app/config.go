// Package app wires Switchboard together: configuration from the
// environment, the database and Redis (real or embedded), the HTTP server,
// the FreeSWITCH pool, and the command line. It holds no business logic.
package app

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard/switchboard/internal/comms/fax"
	"github.com/switchboard/switchboard/internal/freeswitch/dialplan"
	"github.com/switchboard/switchboard/internal/platform/egress"
	"github.com/switchboard/switchboard/internal/platform/redisurl"
	"github.com/switchboard/switchboard/internal/web/routes"
)

// Config is everything Switchboard reads from the environment.
type Config struct {
	Listen      string // SWITCHBOARD_LISTEN
	DatabaseURL string // SWITCHBOARD_DATABASE_URL
	RedisURL    string // SWITCHBOARD_REDIS_URL; "" starts an embedded server
	BaseURL     string // SWITCHBOARD_BASE_URL
	// InstallationName is what people see this installation called where a
	// tenant's branding names nothing (SWITCHBOARD_INSTALLATION_NAME).
	InstallationName string
	LogLevel         slog.Level
	LogFormat        string // json or text
	SecretKey        []byte // SWITCHBOARD_SECRET_KEY
	SIPDomain        string // SWITCHBOARD_SIP_DOMAIN
	XMLCurlUser      string
	XMLCurlPass      string
	XMLCurlAllow     []*net.IPNet
	ESLNodes         string // SWITCHBOARD_ESL_NODES
	ESLPassword      string // SWITCHBOARD_ESL_PASSWORD
	Recordings       string // SWITCHBOARD_RECORDINGS_DIR
	// RecordingsMount is where this replica sees the nodes' recordings
	// directory ("" = it does not: live calls' recordings are not served)
	// (SWITCHBOARD_RECORDINGS_MOUNT).
	RecordingsMount string
	// StreamsPerKey caps the open event streams per API key and replica
	// (SWITCHBOARD_SSE_STREAMS_PER_KEY).
	StreamsPerKey int
	// XMLAccessLog is which /fs/xml fetches get a log line
	// (SWITCHBOARD_XML_ACCESS_LOG, SWITCHBOARD_XML_SLOW_FETCH).
	XMLAccessLog routes.XMLAccessLog
	// XMLCacheBytes bounds the XML service's memory: tenant models and
	// rendered documents (SWITCHBOARD_XML_CACHE_MAX_BYTES).
	XMLCacheBytes int
	// XMLPreload reads every tenant's XML model in the background at
	// start (SWITCHBOARD_XML_PRELOAD).
	XMLPreload bool
	// XMLSnapshot is the file the XML models are kept in across a
	// restart; "" when not kept (SWITCHBOARD_XML_SNAPSHOT).
	XMLSnapshot  string
	TwilioURL    string // SWITCHBOARD_TWILIO_URL
	MetaURL      string // SWITCHBOARD_META_URL
	BodyLimit    int
	ShutdownWait time.Duration
	// ShutdownDrain is how long readiness answers 503 "draining" on
	// SIGTERM before the listener closes (SWITCHBOARD_SHUTDOWN_DRAIN).
	ShutdownDrain time.Duration
	// Lifecycle takes the replica out before it stops (serve sets it;
	// nil in tests that build the app alone).
	Lifecycle *Lifecycle
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

// setting is one SWITCHBOARD_* variable. The settings table below is the
// only list of them: LoadConfig reads the environment by walking it,
// `switchboard --help` prints it, and the tables in docs/configuration.md
// and docs/chat.md are written from it (TestConfigurationDocsAreCurrent;
// SWITCHBOARD_WRITE_DOCS=1 rewrites them).
type setting struct {
	name string
	// def is the value read when the variable is unset or blank.
	def string
	// defOf, when set, computes the default from the settings above it
	// (already read into the Config); shown then says what it is.
	defOf func(c *Config) string
	// shown is the default as the docs and --help describe it (markdown),
	// when it is not def itself; "" with def "" reads "unset".
	shown string
	// doc is what the variable means: markdown, one table cell.
	doc string
	// chat puts the variable in docs/chat.md's table as well.
	chat bool
	// set stores the value (v: the variable trimmed, or the default). Its
	// error is the text after "NAME: ", unless it is a namedError.
	set func(c *Config, v string) error
}

// namedError is a setting's error that already starts with the name of
// the variable it concerns.
type namedError struct{ error }

// settings is every environment variable Switchboard reads, in the order
// it reads them (a default computed from another variable comes after it)
// and the docs list them.
var settings = []setting{
	{name: "SWITCHBOARD_LISTEN", def: ":8080", doc: "HTTP listen address",
		set: func(c *Config, v string) error { c.Listen = v; return listenAddr(v) }},
	{name: "SWITCHBOARD_DATABASE_URL", def: "sqlite:data/switchboard.db",
		doc: "`mysql://user:pass@host:3306/db` or `sqlite:path/file.db` (directory created)",
		set: func(c *Config, v string) error {
			c.DatabaseURL = v
			if !strings.HasPrefix(v, "mysql://") && !strings.HasPrefix(v, "sqlite:") {
				return errors.New("must start with mysql:// or sqlite:")
			}
			return nil
		}},
	{name: "SWITCHBOARD_REDIS_URL",
		doc: "`redis://host:6379/0`, or Sentinel: `redis+sentinel://[:pw@]s1:26379,s2:26379/master/0[?password=…]`, or Redis Cluster: `redis+cluster://[:pw@]h1:7000,h2:7000,h3:7000` (any nodes; no database number) ([docs/deploy.md](deploy.md)); `rediss…` for TLS; unset starts an in-process Redis-compatible server (live state then lasts only as long as the process)",
		set: func(c *Config, v string) error {
			c.RedisURL = v
			if v == "" {
				return nil
			}
			rdb, err := redisurl.Open(v)
			if err != nil {
				return err
			}
			return rdb.Close() // only parsed here; openRedis connects
		}},
	{name: "SWITCHBOARD_BASE_URL", def: "http://localhost:8080", doc: "public base URL, used in links",
		set: func(c *Config, v string) error {
			c.BaseURL = strings.TrimRight(v, "/")
			return httpURL(c.BaseURL)
		}},
	{name: "SWITCHBOARD_INSTALLATION_NAME", def: "Switchboard", doc: "the installation's name people see (the chat client's title and heading) where a tenant's and its reseller's branding name no product",
		set: func(c *Config, v string) error {
			c.InstallationName = strings.TrimSpace(v)
			if c.InstallationName == "" || len(c.InstallationName) > 64 {
				return errors.New("must be 1 to 64 characters")
			}
			return nil
		}},
	{name: "SWITCHBOARD_LOG_LEVEL", def: "info", doc: "`debug`, `info`, `warn`, `error`",
		set: func(c *Config, v string) error {
			if c.LogLevel.UnmarshalText([]byte(v)) != nil {
				return errors.New("must be debug, info, warn or error")
			}
			return nil
		}},
	{name: "SWITCHBOARD_LOG_FORMAT", def: "json", doc: "`json` or `text`",
		set: func(c *Config, v string) error {
			c.LogFormat = v
			if v != "json" && v != "text" {
				return errors.New("must be json or text")
			}
			return nil
		}},
	{name: "SWITCHBOARD_XML_ACCESS_LOG", def: "0",
		doc: "share of `/fs/xml` fetches logged at info, `0` to `1` (`0.01`: every hundredth fetch); errors, refused credentials and slow fetches are always logged, and every fetch is counted in the metrics (`switchboard_http_requests_total`, the latency histogram)",
		set: func(c *Config, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || f > 1 {
				return errors.New("must be a share from 0 to 1 (0.01 logs one fetch in a hundred)")
			}
			c.XMLAccessLog.Sample = f
			return nil
		}},
	{name: "SWITCHBOARD_XML_SLOW_FETCH", def: "100ms",
		doc: "an `/fs/xml` fetch answered slower than this is logged at warn; `0` = never",
		set: func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return errors.New("must be a duration like 100ms (0 = never)")
			}
			c.XMLAccessLog.Slow = d
			return nil
		}},
	{name: "SWITCHBOARD_XML_CACHE_MAX_BYTES", def: "256MiB",
		doc: "memory the `/fs/xml` cache may hold, as it counts it: 31/32 for tenant models (least recently used tenants go first; a typical user takes some 140 bytes), 1/32 for rendered documents (the ones asked for again and again; 8 MiB by default); a size in bytes or with `KiB`, `MiB`, `GiB` (at least `1MiB`). The default holds every model of a million users; a bound below what the tenants fetched need makes models be read again and again (see BENCHMARKS.md). Unless `GOMEMLIMIT` is set, `serve` gives the Go runtime a soft memory limit of twice this bound (at least 256 MiB), and unless `GOGC` is set, a collector target of 50 (the heap grows half again over what is live between collections, not twice): resident memory is then about 1.5 times the cache held, plus some 60 MiB of program and binary",
		set: func(c *Config, v string) error {
			n, err := parseSize(v)
			if err != nil || n < 1<<20 {
				return errors.New("must be a size of at least 1MiB, like 256MiB")
			}
			c.XMLCacheBytes = n
			return nil
		}},
	{name: "SWITCHBOARD_XML_PRELOAD", def: "true",
		doc: "read every tenant's `/fs/xml` model in the background once the replica starts (and after a reset), a batch of tenants per query, until three quarters of the model budget is used; fetches meanwhile build the models they need on demand. `false` builds every model on first use only (a restart then costs some twenty queries per tenant while phones re-register)",
		set: func(c *Config, v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return errors.New("must be true or false")
			}
			c.XMLPreload = b
			return nil
		}},
	{name: "SWITCHBOARD_XML_SNAPSHOT", shown: "beside a SQLite database (`<file>.xml-models`), else `data/xml-models.sealed`",
		doc: "file the replica keeps its `/fs/xml` tenant models in when it stops (SIGTERM), so the next start of the same binary answers from them at once instead of reading every tenant again while phones re-register; a model whose tenant changed since (by the outbox) is read afresh, and a file of another release or installation is ignored. Sealed with a key derived from `SWITCHBOARD_SECRET_KEY` (the models hold SIP secrets); `off`: not kept",
		defOf: func(c *Config) string {
			if db, ok := strings.CutPrefix(c.DatabaseURL, "sqlite:"); ok {
				db, _, _ = strings.Cut(db, "?")
				return db + ".xml-models"
			}
			return "data/xml-models.sealed"
		},
		set: func(c *Config, v string) error {
			if v == "off" {
				c.XMLSnapshot = ""
				return nil
			}
			if strings.TrimSpace(v) == "" {
				return errors.New("must be a file path, or off")
			}
			c.XMLSnapshot = v
			return nil
		}},
	{name: "SWITCHBOARD_SHUTDOWN_DRAIN", def: "5s",
		doc: "on SIGTERM, how long `/readyz` answers 503 `draining` while requests are still served, so load balancers stop sending new ones; then event streams end and the listener closes (waiting up to 15 s for requests in flight)",
		set: func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 || d > 5*time.Minute {
				return errors.New("must be a duration like 5s, at most 5m (0 = close at once)")
			}
			c.ShutdownDrain = d
			return nil
		}},
	{name: "SWITCHBOARD_SECRET_KEY", shown: "file beside a SQLite database",
		doc: "32 bytes (64 hex digits or base64) that encrypt SIP secrets, PINs and trunk passwords; **required with MySQL** (`openssl rand -hex 32`); every replica needs the same key",
		set: func(c *Config, v string) error {
			if v == "" {
				if strings.HasPrefix(c.DatabaseURL, "mysql://") {
					return errors.New("required with a MySQL database (32 bytes, hex or base64; e.g. openssl rand -hex 32)")
				}
				return nil
			}
			var err error
			c.SecretKey, err = decodeKey(v)
			return err
		}},
	{name: "SWITCHBOARD_SIP_DOMAIN", shown: "the host name", doc: "the installation's one SIP domain",
		defOf: func(*Config) string { host, _ := os.Hostname(); return host },
		set:   func(c *Config, v string) error { c.SIPDomain = v; return nil }},
	{name: "SWITCHBOARD_XMLCURL_USER", doc: "HTTP Basic user FreeSWITCH must send to `/fs/xml` (set with the password)",
		set: func(c *Config, v string) error { c.XMLCurlUser = v; return nil }},
	{name: "SWITCHBOARD_XMLCURL_PASSWORD", doc: "HTTP Basic password FreeSWITCH must send to `/fs/xml` (set with the user)",
		set: func(c *Config, v string) error {
			c.XMLCurlPass = v
			if (c.XMLCurlUser == "") != (v == "") {
				return errors.New("set both SWITCHBOARD_XMLCURL_USER and SWITCHBOARD_XMLCURL_PASSWORD, or neither")
			}
			return nil
		}},
	{name: "SWITCHBOARD_XMLCURL_ALLOW",
		doc: "comma-separated CIDRs allowed to fetch `/fs/xml`; with neither this nor Basic set, only loopback may",
		set: func(c *Config, v string) error {
			if v == "" {
				return nil
			}
			for _, cidr := range strings.Split(v, ",") {
				_, n, err := net.ParseCIDR(strings.TrimSpace(cidr))
				if err != nil {
					return fmt.Errorf("%q is not a CIDR", cidr)
				}
				c.XMLCurlAllow = append(c.XMLCurlAllow, n)
			}
			return nil
		}},
	{name: "SWITCHBOARD_ESL_NODES",
		doc: "FreeSWITCH event sockets: `host:port`, `password@host:port` or `name=password@host:port`, comma-separated",
		set: func(c *Config, v string) error { c.ESLNodes = v; return nil }},
	{name: "SWITCHBOARD_ESL_PASSWORD", def: "ClueCon", doc: "event socket password for nodes that do not name one",
		set: func(c *Config, v string) error { c.ESLPassword = v; return nil }},
	{name: "SWITCHBOARD_TWILIO_URL", def: "https://api.twilio.com",
		doc: "Twilio API base URL (see [Messaging](messaging.md#messaging-sms-and-whatsapp); tests point it at a local fake)",
		set: func(c *Config, v string) error { c.TwilioURL = strings.TrimRight(v, "/"); return httpURL(c.TwilioURL) }},
	{name: "SWITCHBOARD_META_URL", def: "https://graph.facebook.com/v21.0",
		doc: "WhatsApp Cloud API base URL, with the Graph API version",
		set: func(c *Config, v string) error { c.MetaURL = strings.TrimRight(v, "/"); return httpURL(c.MetaURL) }},
	{name: "SWITCHBOARD_RECORDINGS_DIR", def: "/var/lib/freeswitch/recordings",
		doc: "directory on the FreeSWITCH nodes where the record endpoint writes (`<dir>/<tenant>/<file>.wav`)",
		set: func(c *Config, v string) error { c.Recordings = v; return nil }},
	{name: "SWITCHBOARD_RECORDINGS_MOUNT",
		doc: "where this replica sees the nodes' `SWITCHBOARD_RECORDINGS_DIR` (a shared mount: NFS, CIFS…); set, a CDR's recording plays in the call records report and downloads from `GET /api/tenants/<tenant>/cdrs/<id>/recording`; empty, those recordings stay on the nodes (`404 recording_not_reachable`)",
		set: func(c *Config, v string) error {
			c.RecordingsMount = v
			if v != "" && !filepath.IsAbs(v) {
				return errors.New("must be an absolute path")
			}
			return nil
		}},
	{name: "SWITCHBOARD_SSE_STREAMS_PER_KEY", def: "10",
		doc: "open `/api/telephony/events` streams allowed per API key on one replica; more answer 429",
		set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 10000 {
				return errors.New("must be a number from 1 to 10000")
			}
			c.StreamsPerKey = n
			return nil
		}},
	{name: "SWITCHBOARD_RATE_LIMIT", def: "100",
		doc: "requests per second per API key or administrator, shared by all replicas; `0` = off ([Rate limits](security.md#rate-limits))",
		set: count(func(c *Config) *int { return &c.RateLimit })},
	{name: "SWITCHBOARD_RATE_BURST", def: "200", doc: "requests a credential may send at once above the rate",
		set: count(func(c *Config) *int { return &c.RateBurst })},
	{name: "SWITCHBOARD_AUTH_FAILURE_LIMIT", def: "10",
		doc: "failed authentications per minute per client address before `429`; `0` = off",
		set: count(func(c *Config) *int { return &c.AuthFailureLimit })},
	{name: "SWITCHBOARD_SESSION_MAX", def: "12h",
		doc: "administrators' browser sessions end this long after sign-in, whatever their use ([Web session](security.md#web-session))",
		set: sessionDuration(func(c *Config) *time.Duration { return &c.SessionMax })},
	{name: "SWITCHBOARD_SESSION_IDLE", def: "30m",
		doc: "administrators' browser sessions end after this long without a request (at most `SWITCHBOARD_SESSION_MAX`)",
		set: func(c *Config, v string) error {
			if err := sessionDuration(func(c *Config) *time.Duration { return &c.SessionIdle })(c, v); err != nil {
				return err
			}
			if c.SessionIdle > c.SessionMax {
				return errors.New("must not exceed SWITCHBOARD_SESSION_MAX")
			}
			return nil
		}},
	{name: "SWITCHBOARD_ACCOUNT_FAILURE_LIMIT", def: "20",
		doc: "failed passwords per 15 minutes per administrator before sign-ins from addresses that never signed in to the account get `429`; `0` = off ([Other safeguards](security.md#other-safeguards))",
		set: count(func(c *Config) *int { return &c.AccountFailureLimit })},
	{name: "SWITCHBOARD_EGRESS_ALLOWED_HOSTS",
		doc: "hosts a tenant may name in a messaging provider URL (Kannel's `credentials.sendsms_url`), comma-separated: exact names or addresses, `*.example.net` for the names under a domain, `*` for any; unset: none, Kannel and SMPP channels are refused ([Outbound requests](security.md#outbound-requests-egress))",
		set: func(c *Config, v string) (err error) { c.Egress.Hosts, err = egress.ParseHosts(v); return err }},
	{name: "SWITCHBOARD_EGRESS_ALLOWED_NETS",
		doc: "CIDRs of loopback, private or link-local addresses those provider URLs may still connect to (a Kannel on the operator's network, e.g. `10.0.5.7/32`); unset: public addresses only",
		set: func(c *Config, v string) (err error) { c.Egress.Nets, err = egress.ParseNets(v); return err }},
	{name: "SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE", def: "false",
		doc: "let outbound webhooks reach loopback, private and link-local addresses (development and tests only; see [Outbound webhooks](webhooks.md#outbound-webhooks))",
		set: boolean(func(c *Config) *bool { return &c.WebhookAllowPrivate })},
	{name: "SWITCHBOARD_WEBHOOK_ALLOW_HTTP", def: "false",
		doc: "accept plain `http://` webhook URLs (development and tests only)",
		set: boolean(func(c *Config) *bool { return &c.WebhookAllowHTTP })},
	{name: "SWITCHBOARD_WEBHOOK_DISABLE_AFTER", def: "20",
		doc: "consecutive failed webhook attempts before the webhook is disabled",
		set: count(func(c *Config) *int { return &c.WebhookDisableAfter })},
	{name: "SWITCHBOARD_WEBHOOK_RETRY_MIN", def: "1s",
		doc: "first webhook retry delay (doubled per attempt with jitter, capped at 10 minutes)",
		set: func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d < time.Millisecond || d > time.Hour {
				return errors.New("must be a duration from 1ms to 1h")
			}
			c.WebhookRetryMin = d
			return nil
		}},
	{name: "SWITCHBOARD_SERVER_DOWN_AFTER", def: "30s",
		doc: "a FreeSWITCH node whose event socket stays lost this long is reported `server.down` to system webhooks ([Outbound webhooks](webhooks.md#outbound-webhooks))",
		set: sessionDuration(func(c *Config) *time.Duration { return &c.ServerDownAfter })},
	{name: "SWITCHBOARD_METRICS_LISTEN",
		doc: "separate address serving `/metrics` without credentials; unset: `/metrics` on the API listener for platform credentials",
		set: func(c *Config, v string) error {
			c.MetricsListen = v
			if v == "" {
				return nil
			}
			return listenAddr(v)
		}},
	{name: "SWITCHBOARD_CAPTCHA_VERIFY_URL",
		doc: "captcha siteverify endpoint (Cloudflare Turnstile, hCaptcha) for click-to-call widgets with `require_captcha`; unset: such widgets answer `501`",
		set: func(c *Config, v string) error { c.CaptchaVerifyURL = v; return nil }},
	{name: "SWITCHBOARD_CAPTCHA_SECRET", doc: "the site's captcha secret, sent with each token (required with the URL)",
		set: func(c *Config, v string) error { c.CaptchaSecret = v; return nil }},

	// The media library (MediaConfig, media.go).
	{name: "SWITCHBOARD_MEDIA_DIR", def: "data/media",
		doc: "the media library: voice prompts (`<dir>/<tenant>/<file>.wav`), music on hold (`<dir>/<tenant>/moh/<class>/`), imported recordings (`<dir>/<tenant>/recordings/`), spooled bulk imports (`<dir>/.imports/`); shared by every replica",
		set: func(c *Config, v string) (err error) { c.Media.Dir, err = filepath.Abs(v); return err }},
	{name: "SWITCHBOARD_MEDIA_NODE_DIR", shown: "the media directory",
		doc:   "the same library as the FreeSWITCH nodes mount it; `local_stream.conf` points there",
		defOf: func(c *Config) string { return c.Media.Dir },
		set: func(c *Config, v string) error {
			c.Media.NodeDir = strings.TrimRight(v, "/")
			if !strings.HasPrefix(c.Media.NodeDir, "/") {
				return errors.New("must be an absolute path")
			}
			return nil
		}},
	{name: "SWITCHBOARD_MEDIA_URL", shown: "`SWITCHBOARD_BASE_URL/fs/media`",
		doc:   "`/fs/media` as the nodes reach it: prompts and chimes are played from signed `http_cache://` URLs under it (mod_http_cache)",
		defOf: func(c *Config) string { return c.BaseURL + "/fs/media" },
		set: func(c *Config, v string) error {
			c.Media.NodeURL = strings.TrimRight(v, "/")
			if !dialplan.ValidMediaBase(c.Media.NodeURL) {
				return errors.New("must be an http or https URL of letters, digits and . _ ~ : / - [ ] only")
			}
			return nil
		}},
	{name: "SWITCHBOARD_MOH_DEFAULT_DIR", def: "/usr/share/freeswitch/sounds/music",
		doc: "the platform's default hold music on the nodes (`<dir>/8000`, `<dir>/16000`, as Debian's `freeswitch-music-default` installs it): `local_stream.conf`'s stream `moh`, played by queues, conference rooms, tenants and extensions without a class of their own",
		set: func(c *Config, v string) error {
			c.Media.MOHDefaultDir = strings.TrimRight(v, "/")
			if !dialplan.SafeNodePath(c.Media.MOHDefaultDir) {
				return errors.New("must be an absolute path of letters, digits, . _ - between slashes")
			}
			return nil
		}},
	{name: "SWITCHBOARD_MEDIA_MAX_BYTES", def: "67108864",
		doc: "largest decoded audio per upload or import (`413` beyond)",
		set: func(c *Config, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1024 || n > 1<<30 {
				return errors.New("must be a number of bytes from 1024 to 1073741824")
			}
			c.Media.MaxBytes = n
			return nil
		}},
	{name: "SWITCHBOARD_MEDIA_MAX_PROMPT_DURATION", def: "10m",
		doc: "longest voice prompt (`413 audio_too_long` beyond; checked from the upload's header before converting, and the conversion stops there)",
		set: mediaDuration("10m", func(c *Config) *time.Duration { return &c.Media.MaxPromptDuration })},
	{name: "SWITCHBOARD_MEDIA_MAX_DURATION", def: "2h",
		doc: "longest imported recording, voicemail message or music-on-hold file (`413 audio_too_long` beyond)",
		set: mediaDuration("2h", func(c *Config) *time.Duration { return &c.Media.MaxDuration })},
	{name: "SWITCHBOARD_MEDIA_MAX_STORED_BYTES", def: "268435456",
		doc: "largest converted (WAV) file, whatever the upload's size (`413 audio_too_large` beyond): bounds decompression bombs",
		set: func(c *Config, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1<<16 || n > 1<<34 {
				return errors.New("must be a number of bytes from 65536 to 17179869184")
			}
			c.Media.MaxStoredBytes = n
			return nil
		}},
	{name: "SWITCHBOARD_MEDIA_CONVERT_TIMEOUT", def: "60s", doc: "time one sox conversion may take",
		set: func(c *Config, v string) error {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return errors.New("must be a duration such as 60s")
			}
			c.Media.Timeout = d
			return nil
		}},
	{name: "SWITCHBOARD_SOX", def: "sox", doc: "the sox binary (Debian `sox` + `libsox-fmt-mp3`)",
		set: func(c *Config, v string) error { c.Media.Sox = v; return nil }},

	// Fax to e-mail (FaxConfig, fax.go).
	{name: "SWITCHBOARD_SMTP_URL",
		doc: "mail relay for received faxes, `smtp://user:password@host:port` (port `587` by default; STARTTLS whenever the relay offers it; credentials are sent only over TLS or to localhost); unset: faxes are kept and queued, not e-mailed",
		set: func(c *Config, v string) error { c.Fax.smtpURL = v; return nil }},
	{name: "SWITCHBOARD_SMTP_FROM", doc: "sender address of fax e-mails (required with `SWITCHBOARD_SMTP_URL`)",
		set: func(c *Config, v string) error {
			smtp, err := fax.ParseSMTP(c.Fax.smtpURL, v)
			if err != nil {
				return namedError{err} // names the URL or the sender
			}
			c.Fax.SMTP = smtp
			return nil
		}},
	{name: "SWITCHBOARD_FAX_MAX_BYTES", def: "20971520", doc: "largest fax a node may upload (`413` beyond)",
		set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1024 || n > 1<<30 {
				return errors.New("must be a number of bytes from 1024 to 1073741824")
			}
			c.Fax.MaxBytes = n
			return nil
		}},

	// Team chat on ejabberd and SIP over WebSocket (docs/chat.md).
	{name: "SWITCHBOARD_CHAT_API_URL", chat: true,
		doc: "ejabberd's `mod_http_api` (`http://127.0.0.1:5281/api`); unset: no chat server",
		set: func(c *Config, v string) error {
			c.ChatAPIURL = strings.TrimRight(v, "/")
			if c.ChatAPIURL == "" {
				return nil
			}
			if u, err := url.Parse(c.ChatAPIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return errors.New("must be an http(s) URL such as http://127.0.0.1:5281/api")
			}
			return nil
		}},
	{name: "SWITCHBOARD_CHAT_DOMAIN", chat: true, doc: "XMPP domain of users (required with the API URL)",
		set: func(c *Config, v string) error {
			c.ChatDomain = strings.ToLower(v)
			if c.ChatAPIURL != "" && (c.ChatDomain == "" || strings.ContainsAny(c.ChatDomain, "@/ ")) {
				return errors.New("required with SWITCHBOARD_CHAT_API_URL: the XMPP domain (e.g. chat.example.net)")
			}
			return nil
		}},
	{name: "SWITCHBOARD_CHAT_MUC_DOMAIN", chat: true, shown: "`conference.<domain>`", doc: "XMPP service of rooms",
		defOf: func(c *Config) string {
			if c.ChatAPIURL == "" {
				return ""
			}
			return "conference." + c.ChatDomain
		},
		set: func(c *Config, v string) error { c.ChatMUCDomain = strings.ToLower(v); return nil }},
	{name: "SWITCHBOARD_CHAT_WS_URL", chat: true,
		doc: "the `wss://` URL chat clients use (a TLS proxy in front of ejabberd's `/ws`; compose: `ws://localhost:5280/ws`, published)",
		set: func(c *Config, v string) error {
			c.ChatWSURL = v
			if c.ChatAPIURL == "" || v == "" {
				return nil
			}
			return wsURL(v)
		}},
	{name: "SWITCHBOARD_SIP_WS_PORT", chat: true, def: "5066",
		doc: "SIP over WebSocket port: a `ws-binding` on every internal sofia profile Switchboard renders (`0` = none)",
		set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 65535 {
				return errors.New("must be a port number (0 = no WebSocket binding)")
			}
			c.SIPWSPort = n
			return nil
		}},
	// Browsers reach FreeSWITCH over TLS (wss-binding) except on a
	// loopback SIP domain (development), where plain ws is enough.
	{name: "SWITCHBOARD_SIP_WSS_PORT", chat: true, shown: "`7443` (`0` on a loopback SIP domain)",
		doc: "SIP over secure WebSocket port: a `wss-binding` on every internal sofia profile (`0` = none; FreeSWITCH needs `wss.pem`)",
		defOf: func(c *Config) string {
			if isLoopbackHost(c.SIPDomain) {
				return "0"
			}
			return "7443"
		},
		set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > 65535 {
				return errors.New("must be a port number (0 = no secure WebSocket binding)")
			}
			c.SIPWSSPort = n
			return nil
		}},
	// The bundle's URL points at the binding rendered on the profile
	// unless the operator names another (a TLS proxy, a server's wss_port).
	{name: "SWITCHBOARD_SIP_WS_URL", chat: true,
		shown: "`wss://<SIP domain>:<wss port>`; `ws://<SIP domain>:<ws port>` on a loopback SIP domain",
		doc:   "SIP over WebSocket URL put in provisioning bundles and web-phone sessions (see [Register a phone](phones.md#register-a-phone))",
		defOf: func(c *Config) string {
			switch {
			case c.SIPWSSPort > 0:
				return "wss://" + c.SIPDomain + ":" + strconv.Itoa(c.SIPWSSPort)
			case c.SIPWSPort > 0 && isLoopbackHost(c.SIPDomain):
				return "ws://" + c.SIPDomain + ":" + strconv.Itoa(c.SIPWSPort)
			}
			return "wss://" + c.SIPDomain + ":7443"
		},
		set: func(c *Config, v string) error { c.SIPWSURL = v; return wsURL(v) }},
}

// LoadConfig reads the environment by walking settings. A bad value is an
// error of one line naming the variable.
func LoadConfig(getenv func(string) string) (Config, error) {
	c := Config{
		// 1.5 MiB: a 1 MiB picture (webhook avatars) is 1.4 MB as the
		// base64 data: URL the API takes.
		BodyLimit:    3 << 19,
		ShutdownWait: 15 * time.Second,
	}
	for _, s := range settings {
		v := strings.TrimSpace(getenv(s.name))
		if v == "" {
			v = s.def
			if s.defOf != nil {
				v = s.defOf(&c)
			}
		}
		if err := s.set(&c, v); err != nil {
			if named, ok := err.(namedError); ok {
				return c, named.error
			}
			return c, fmt.Errorf("%s: %v", s.name, err)
		}
	}
	return c, nil
}

// The parsers settings share.

// count reads a whole number from 0 to 1000000 (limits; 0 is off).
func count(dst func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 1000000 {
			return errors.New("must be a whole number from 0 to 1000000")
		}
		*dst(c) = n
		return nil
	}
}

// boolean reads true or false.
func boolean(dst func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errors.New("must be true or false")
		}
		*dst(c) = b
		return nil
	}
}

// sessionDuration reads a duration from 1s to 30 days.
func sessionDuration(dst func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second || d > 30*24*time.Hour {
			return errors.New("must be a duration from 1s to 720h, such as 30m or 12h")
		}
		*dst(c) = d
		return nil
	}
}

// mediaDuration reads a duration from 1s to 24h; example is the default.
func mediaDuration(example string, dst func(*Config) *time.Duration) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second || d > 24*time.Hour {
			return fmt.Errorf("must be a duration from 1s to 24h, such as %s", example)
		}
		*dst(c) = d
		return nil
	}
}

func listenAddr(v string) error {
	if _, _, err := net.SplitHostPort(v); err != nil {
		return fmt.Errorf("%q is not host:port", v)
	}
	return nil
}

func httpURL(v string) error {
	if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("must be an http(s) URL")
	}
	return nil
}

func wsURL(v string) error {
	if u, err := url.Parse(v); err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
		return errors.New("must be a ws:// or wss:// URL")
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

// shownDefault is a setting's default as the docs show it (markdown).
func (s setting) shownDefault() string {
	switch {
	case s.shown != "":
		return s.shown
	case s.def != "":
		return "`" + s.def + "`"
	}
	return "unset"
}

// settingsTable is the markdown table of the settings keep selects, as
// docs/configuration.md and docs/chat.md hold it.
func settingsTable(keep func(setting) bool) string {
	var b strings.Builder
	b.WriteString("| variable | default | meaning |\n|---|---|---|\n")
	for _, s := range settings {
		if keep(s) {
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", s.name, s.shownDefault(), s.doc)
		}
	}
	return b.String()
}

var mdLink = regexp.MustCompile(`\[([^\]]+)\]\(([^)#]*)[^)]*\)`)

// plainText is a markdown cell as a terminal shows it: links to other
// pages of docs/ become "text (docs/page.md)".
func plainText(md string) string {
	md = mdLink.ReplaceAllStringFunc(md, func(link string) string {
		m := mdLink.FindStringSubmatch(link)
		if m[2] == "" || m[1] == "docs/"+m[2] {
			return m[1]
		}
		return m[1] + " (docs/" + m[2] + ")"
	})
	return strings.NewReplacer("`", "", "**", "").Replace(md)
}

// writeSettingsHelp prints every setting for --help: name and default on
// one line, the meaning wrapped below it.
func writeSettingsHelp(w io.Writer) {
	fmt.Fprintln(w, "\nEnvironment variables (docs/configuration.md):")
	for _, s := range settings {
		fmt.Fprintf(w, "  %s (default: %s)\n", s.name, plainText(s.shownDefault()))
		line := "     "
		for _, word := range strings.Fields(plainText(s.doc)) {
			if len(line)+1+len(word) > 80 && len(line) > 5 {
				fmt.Fprintln(w, line)
				line = "     "
			}
			line += " " + word
		}
		fmt.Fprintln(w, line)
	}
}

// parseSize reads a byte count: digits with an optional KiB, MiB or GiB.
func parseSize(v string) (int, error) {
	mult := 1
	for _, u := range []struct {
		suffix string
		mult   int
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if n, ok := strings.CutSuffix(v, u.suffix); ok {
			v, mult = n, u.mult
			break
		}
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > (1<<40)/mult {
		return 0, errors.New("not a size")
	}
	return n * mult, nil
}

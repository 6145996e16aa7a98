// Package apptest starts a real Switchboard HTTP server on 127.0.0.1 for
// tests: the same wiring as `switchboard serve`, over SQLite and the
// embedded Redis, and again over MySQL and real Redis when
// SWITCHBOARD_TEST_MYSQL_URL and SWITCHBOARD_TEST_REDIS_URL are set.
package apptest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/app"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
	"github.com/switchboard/switchboard/internal/platform/redistest"
)

// Server is a running test server.
type Server struct {
	URL   string
	Key   string // a platform API key
	Store *models.Store
	Redis redis.UniversalClient
	Cfg   app.Config
	// Logs holds the server's JSON log lines (info and above).
	Logs *LogBuffer

	// client sends the test's requests from this server's own loopback
	// address (replicas share it), so per-address limits one test switches
	// on never count another test's requests on a shared Redis.
	client *http.Client

	contractOnce sync.Once
	contractDoc  *contract
	contractErr  error
}

// LogBuffer collects log output safely across goroutines.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Lines decodes every JSON log line written so far.
func (b *LogBuffer) Lines(t testing.TB) []map[string]any {
	t.Helper()
	b.mu.Lock()
	raw := b.buf.String()
	b.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(raw), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// String is the raw log text.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Env is one backend pairing to run HTTP tests on.
type Env struct {
	Name     string
	DB       storetest.Backend
	RedisURL string // "" = miniredis
}

// Envs lists the backend pairings of this run: SQLite with embedded Redis
// always, MySQL with real Redis when CI provides them.
func Envs(t testing.TB) []Env {
	t.Helper()
	out := []Env{}
	for _, b := range storetest.Backends(t) {
		e := Env{Name: b.Name, DB: b}
		if b.Name == "mysql" {
			e.RedisURL = os.Getenv("SWITCHBOARD_TEST_REDIS_URL")
		}
		out = append(out, e)
	}
	return out
}

// AnyEnv is the pairing for a test that needs a server but not every
// backend: the first of Envs. It skips in a run that only repeats the
// per-backend tests (storetest.PerBackendOnly).
func AnyEnv(t testing.TB) Env {
	t.Helper()
	if storetest.PerBackendOnly() {
		t.Skip("a test on one backend: it ran in the other pass")
	}
	return Envs(t)[0]
}

// Each runs fn once per backend pairing with a fresh server, in parallel
// with the other tests that use Each (go test -parallel bounds how many
// run at once): most of an HTTP test's time is spent waiting on its
// server, the database and Redis. A parallel test shares the MySQL
// database and the Redis with the others running beside it, so it works
// in its own tenants (Tenant), with names from storetest.Name, and never
// counts what the whole database or Redis holds or does. Calling Each
// makes the test parallel: it must not call t.Parallel or t.Setenv itself.
// A test that cannot run beside others uses EachSerial.
func Each(t *testing.T, env map[string]string, fn func(t *testing.T, s *Server)) {
	t.Helper()
	t.Parallel()
	for _, e := range Envs(t) {
		t.Run(e.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, Start(t, e, env))
		})
	}
}

// EachSerial is Each for a test that must run alone (no parallel test runs
// beside it): outbound webhooks, for one, are delivered by every server
// running on the shared database, so a receiver would hear each event once
// per server alive.
func EachSerial(t *testing.T, env map[string]string, fn func(t *testing.T, s *Server)) {
	t.Helper()
	for _, e := range Envs(t) {
		t.Run(e.Name, func(t *testing.T) { fn(t, Start(t, e, env)) })
	}
}

// TestSecretKey is the hex server key test servers run with.
const TestSecretKey = "3031323334353637383961626364656630313233343536373839616263646566"

// Start runs a server for the test; env overrides configuration variables.
func Start(t testing.TB, e Env, env map[string]string) *Server {
	t.Helper()
	// Test servers share the CI database but not their FreeSWITCH nodes:
	// each dispatches the outbox to its own subscribers.
	return StartReplica(t, e, env, storetest.Name("srv"))
}

// StartReplica runs a server in an outbox group: replicas of one
// installation (same database, same Redis URL in e) share the group.
func StartReplica(t testing.TB, e Env, env map[string]string, outboxGroup string) *Server {
	t.Helper()
	// Administrators' passwords at bcrypt's minimum cost (models proves
	// the real one): most of a second each under the race detector.
	models.SetTestPasswordCost()
	ctx := context.Background()
	st := storetest.Open(t, e.DB)
	rdb := OpenRedis(t, e.RedisURL)
	defaults := map[string]string{
		"SWITCHBOARD_DATABASE_URL": e.DB.URL,
		"SWITCHBOARD_LISTEN":       "127.0.0.1:0",
		"SWITCHBOARD_SECRET_KEY":   TestSecretKey,
		"SWITCHBOARD_SIP_DOMAIN":   "sip.test",
		// Tests send many requests with one key from one address; the
		// rate-limit tests switch the limits on.
		"SWITCHBOARD_RATE_LIMIT":         "0",
		"SWITCHBOARD_AUTH_FAILURE_LIMIT": "0",
		// Uploaded audio goes to the test's own directory.
		"SWITCHBOARD_MEDIA_DIR": t.TempDir(),
		// So are the XML models kept across a restart.
		"SWITCHBOARD_XML_SNAPSHOT": filepath.Join(t.TempDir(), "xml-models"),
	}
	getenv := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return defaults[k]
	}
	cfg, err := app.LoadConfig(getenv)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	cfg.OutboxGroup = outboxGroup
	logs := &LogBuffer{}
	url := listen(t, cfg, st, rdb, logs)
	key, err := st.CreateKey(ctx, map[string]any{"name": "test platform key"}, "test")
	if err != nil {
		t.Fatalf("platform key: %v", err)
	}
	return &Server{URL: url, Key: key["key"].(string), Store: st, Redis: rdb, Cfg: cfg, Logs: logs, client: loopbackClient()}
}

// loopbackClient is an HTTP client that connects from a random address of
// 127.0.0.0/8 (Linux answers on all of them), following no redirects.
func loopbackClient() *http.Client {
	ip := net.IPv4(127, byte(1+mrand.IntN(254)), byte(1+mrand.IntN(254)), byte(1+mrand.IntN(254)))
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}, Timeout: 10 * time.Second}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = dialer.DialContext
	return &http.Client{Transport: tr, CheckRedirect: noRedirects.CheckRedirect}
}

// Replica starts a second server over the same database, Redis and
// configuration (outbox group included), as another replica of the same
// installation behind a load balancer would be.
func (s *Server) Replica(t testing.TB) *Server {
	t.Helper()
	r := &Server{Key: s.Key, Store: s.Store, Redis: s.Redis, Cfg: s.Cfg, Logs: &LogBuffer{}, client: s.client}
	r.Cfg.Listen = "127.0.0.1:0"
	r.URL = listen(t, r.Cfg, s.Store, s.Redis, r.Logs)
	return r
}

// listen builds the app as serve does and serves it on a loopback port.
func listen(t testing.TB, cfg app.Config, st *models.Store, rdb redis.UniversalClient, logs *LogBuffer) string {
	t.Helper()
	log := slog.New(slog.NewJSONHandler(logs, nil))
	if os.Getenv("SWITCHBOARD_TEST_LOG") != "" {
		log = slog.New(slog.NewMultiHandler(log.Handler(), slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})))
	}
	bctx, cancel := context.WithCancel(context.Background())
	fapp, stop, err := app.Build(bctx, cfg, st, rdb, log)
	if err != nil {
		cancel()
		t.Fatalf("build: %v", err)
	}
	// cfg.Listen is 127.0.0.1:0 unless a test must know the address before
	// the server starts (providers calling back on SWITCHBOARD_BASE_URL).
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		t.Fatal(err)
	}
	go fapp.Listener(ln) //nolint:errcheck // ends at shutdown
	t.Cleanup(func() {
		_ = fapp.ShutdownWithTimeout(5 * time.Second)
		cancel()
		stop()
	})
	return "http://" + ln.Addr().String()
}

// OpenRedis connects to url (any SWITCHBOARD_REDIS_URL form: one server,
// Sentinel or Cluster), or to a fresh miniredis when url is "".
func OpenRedis(t testing.TB, url string) redis.UniversalClient {
	t.Helper()
	if url == "" {
		m := miniredis.RunT(t)
		url = "redis://" + m.Addr() + "/0"
	}
	return redistest.Open(t, url)
}

// Response is what a test request got back.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into v.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Map decodes a JSON object body.
func (r *Response) Map(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.JSON(t, &m)
	return m
}

// Code returns the error code of an error body.
func (r *Response) Code(t testing.TB) string {
	t.Helper()
	code, _ := r.Map(t)["code"].(string)
	return code
}

// Expect fails the test unless the response has the status.
func (r *Response) Expect(t testing.TB, status int) *Response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	return r
}

// ExpectHeader fails the test unless the response has the header value.
func (r *Response) ExpectHeader(t testing.TB, name, want string) *Response {
	t.Helper()
	if got := r.Header.Get(name); got != want {
		t.Fatalf("%s: %q, want %q; body %.300s", name, got, want, r.Body)
	}
	return r
}

// Do sends a request with an API key (key "" sends none); body may be a
// string or []byte (sent as is) or any value (sent as JSON).
func (s *Server) Do(t testing.TB, method, path, key string, body any) *Response {
	t.Helper()
	return s.DoHeaders(t, method, path, map[string]string{"X-API-Key": key}, body)
}

// DoHeaders sends a request with the given headers (empty values are skipped).
func (s *Server) DoHeaders(t testing.TB, method, path string, headers map[string]string, body any) *Response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		js, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(js)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	return s.Send(t, req)
}

// Send sends a request built by the test and checks the exchange against
// the served OpenAPI document (see contract.go).
func (s *Server) Send(t testing.TB, req *http.Request) *Response {
	t.Helper()
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			t.Fatal(err)
		}
		req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	client := s.client
	if client == nil {
		client = noRedirects
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := &Response{Status: resp.StatusCode, Header: resp.Header, Body: data}
	s.checkContract(t, req, body, r)
	return r
}

// noRedirects answers a redirect as it is: tests assert what the server
// said (a page's 303 to /login), not where a browser would go next.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// Tenant creates a tenant with a random name and returns the name.
func (s *Server) Tenant(t testing.TB, prefix string) string {
	t.Helper()
	name := storetest.Name(prefix)
	s.Do(t, "POST", "/api/tenants/", s.Key, map[string]any{"tenant": name, "callerid": "+27110000000"}).Expect(t, 201)
	return name
}

// KeyFor creates an API key with the given fields and returns its value.
func (s *Server) KeyFor(t testing.TB, fields map[string]any) string {
	t.Helper()
	if fields["name"] == nil {
		fields["name"] = "test key"
	}
	return s.Do(t, "POST", "/api/key/", s.Key, fields).Expect(t, 201).Map(t)["key"].(string)
}

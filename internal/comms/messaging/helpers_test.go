package messaging_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/switchboard/switchboard/internal/comms/messaging"
	"github.com/switchboard/switchboard/internal/comms/messaging/providertest"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// The worker and adapter tests run on a SQLite file of their own: the
// outbox is shared by everything on one database, and the HTTP tests in
// routes exercise MySQL (two replicas included).
type env struct {
	st     *models.Store
	rdb    redis.UniversalClient
	owner  models.Owner
	twilio *providertest.Twilio
	meta   *providertest.Meta
}

const (
	testSid   = "AC00000000000000000000000000000001"
	testToken = "twilio-auth-token-0001"
	testPNID  = "106540352242922"
	testWAT   = "EAAG-access-token"
)

func newEnv(t *testing.T) *env {
	t.Helper()
	st := storetest.Open(t, storetest.Backend{Name: "sqlite", URL: "sqlite:" + filepath.Join(t.TempDir(), "msg.db")})
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	name := storetest.Name("msg")
	if _, err := st.Create(ctx, st.Registry().Resource("tenants"), models.Owner{}, map[string]any{"tenant": name}); err != nil {
		t.Fatal(err)
	}
	owner, err := st.Tenant(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{st: st, rdb: rdb, owner: owner, twilio: providertest.NewTwilio(testSid, testToken), meta: providertest.NewMeta(testPNID, testWAT)}
	t.Cleanup(e.twilio.Close)
	t.Cleanup(e.meta.Close)
	return e
}

func (e *env) service(cfg messaging.Config) *messaging.Service {
	cfg.BaseURL = "https://sb.example.net"
	cfg.Providers = messaging.Providers{Twilio: e.twilio.URL, Meta: e.meta.URL}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		if os.Getenv("SWITCHBOARD_TEST_LOG") != "" {
			cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}
	}
	if cfg.BackoffBase == 0 {
		cfg.BackoffBase = 10 * time.Millisecond
	}
	return messaging.New(e.st, e.rdb, cfg)
}

// channel creates a messaging channel through the store (as the API does).
func (e *env) channel(t *testing.T, fields map[string]any) int64 {
	t.Helper()
	if fields["name"] == nil {
		fields["name"] = fmt.Sprintf("ch%d", time.Now().UnixNano())
	}
	rec, err := e.st.Create(context.Background(), e.st.Registry().Resource("messaging_channels"), e.owner, fields)
	if err != nil {
		t.Fatalf("create channel: %v", err)
	}
	return rec["id"].(int64)
}

func (e *env) twilioSMS(t *testing.T, extra map[string]any) int64 {
	f := map[string]any{"type": "sms", "provider": "twilio", "sender": "+27115550000", "rate_per_second": json.Number("100"),
		"credentials": map[string]any{"account_sid": testSid, "auth_token": testToken}}
	for k, v := range extra {
		f[k] = v
	}
	return e.channel(t, f)
}

func (e *env) metaWA(t *testing.T, extra map[string]any) int64 {
	f := map[string]any{"type": "whatsapp", "provider": "meta_cloud", "sender": "+27115550001", "rate_per_second": json.Number("100"),
		"credentials": map[string]any{"phone_number_id": testPNID, "access_token": testWAT, "app_secret": "meta-app-secret", "verify_token": "verify-token-xyz"}}
	for k, v := range extra {
		f[k] = v
	}
	return e.channel(t, f)
}

// anyTenant lets a test send from any channel.
type anyTenant struct{}

func (anyTenant) MayTenant(string) bool { return true }

func ptr(s string) *string { return &s }

func (e *env) send(t *testing.T, svc *messaging.Service, in messaging.SendRequest) *messaging.Message {
	t.Helper()
	m, err := svc.Send(context.Background(), anyTenant{}, in)
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	return m
}

func (e *env) message(t *testing.T, svc *messaging.Service, id int64) *messaging.Message {
	t.Helper()
	m, err := svc.Message(context.Background(), anyTenant{}, id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// drain runs the worker until the outbox is empty of due rows.
func drain(t *testing.T, svc *messaging.Service) {
	t.Helper()
	for i := 0; i < 100; i++ {
		n, err := svc.DrainOnce(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
	t.Fatal("outbox does not drain")
}

func outboxRows(t *testing.T, st *models.Store) int {
	t.Helper()
	var n int
	if err := st.Querier().GetContext(context.Background(), &n, "SELECT COUNT(*) FROM messaging_outbox"); err != nil {
		t.Fatal(err)
	}
	return n
}

func itoa(v int64) string { return fmt.Sprint(v) }

func jsonNum(n int) json.Number { return json.Number(strconv.Itoa(n)) }

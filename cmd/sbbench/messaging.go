package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/switchboard/switchboard/internal/comms/messaging"
	"github.com/switchboard/switchboard/internal/comms/messaging/providertest"
	"github.com/switchboard/switchboard/internal/models"
)

const (
	benchSid   = "AC00000000000000000000000000000b00"
	benchToken = "bench-auth-token-0000"
)

// benchMessaging measures two things: POST /api/messaging/send answered
// open-loop at a fixed rate by the real server (its worker draining to a
// local Twilio fake at the same time), then how fast one replica's worker
// drains a full outbox to the fake.
func benchMessaging(ctx context.Context, args []string) error {
	fl := flag.NewFlagSet("messaging", flag.ContinueOnError)
	rate := fl.Int("rate", 500, "send requests per second (open loop)")
	dur := fl.Duration("duration", 10*time.Second, "how long to send")
	backlog := fl.Int("backlog", 10000, "messages queued before the drain run")
	channels := fl.Int("channels", 20, "channels the backlog is spread over (100 msg/s each at most)")
	if err := fl.Parse(args); err != nil {
		return err
	}
	b, err := openBackend(ctx)
	if err != nil {
		return err
	}
	defer b.close()
	tw := providertest.NewTwilio(benchSid, benchToken)
	defer tw.Close()
	owner, chIDs, err := seedMessaging(ctx, b.st, *channels)
	if err != nil {
		return err
	}

	// 1. Send acceptance through the real server.
	// One key sends 500/s: the benchmark measures the send path, not the
	// per-key limit (100/s by default).
	base, stop, err := startBenchServer(ctx, b, map[string]string{"SWITCHBOARD_TWILIO_URL": tw.URL, "SWITCHBOARD_RATE_LIMIT": "0"})
	if err != nil {
		return err
	}
	key, err := b.st.CreateKey(ctx, map[string]any{"name": "bench sender", "tenant": owner.Tenant}, "sbbench")
	if err != nil {
		stop()
		return err
	}
	lat, failed, elapsed := openLoopSends(ctx, base, key["key"].(string), chIDs, *rate, *dur)
	stop()
	fmt.Printf("messaging send: %d POST /api/messaging/send at %d/s open loop over %.1fs on %s (%d errors)\n",
		len(lat)+failed, *rate, elapsed.Seconds(), b.name, failed)
	fmt.Printf("  HTTP answer (202): p50 %.2f ms  p99 %.2f ms  max %.2f ms\n", ms(pctl(lat, 0.5)), ms(pctl(lat, 0.99)), ms(pctl(lat, 1)))

	// 2. Outbox drain by one replica's worker.
	svc := messaging.New(b.st, b.rdb, messaging.Config{
		BaseURL: "http://127.0.0.1", Providers: messaging.Providers{Twilio: tw.URL},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Replica: "bench",
	})
	if _, err := b.st.Querier().ExecContext(ctx, "DELETE FROM messaging_outbox"); err != nil {
		return err
	}
	body := "Your order is ready for collection"
	for i := 0; i < *backlog; i++ {
		if _, err := svc.Send(ctx, anyTenant{}, messaging.SendRequest{ChannelID: chIDs[i%len(chIDs)], To: "+27825550001", Body: &body}); err != nil {
			return fmt.Errorf("queue: %w", err)
		}
	}
	before := len(tw.Accepted())
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	start := time.Now()
	go func() { svc.Run(runCtx); close(done) }()
	for len(tw.Accepted())-before < *backlog && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	took := time.Since(start)
	cancel()
	<-done
	fmt.Printf("messaging drain: %d queued messages over %d channels sent to the local Twilio fake in %.2fs = %.0f msg/s (%d provider requests)\n",
		*backlog, len(chIDs), took.Seconds(), float64(*backlog)/took.Seconds(), tw.Requests())
	return nil
}

type anyTenant struct{}

func (anyTenant) MayTenant(string) bool { return true }

// seedMessaging creates a tenant with n Twilio SMS channels at 100 msg/s.
func seedMessaging(ctx context.Context, st *models.Store, n int) (models.Owner, []int64, error) {
	tenant := fmt.Sprintf("bmsg%06d", rand.IntN(1000000))
	if _, err := st.Create(ctx, st.Registry().Resource("tenants"), models.Owner{}, map[string]any{"tenant": tenant}); err != nil {
		return models.Owner{}, nil, err
	}
	owner, err := st.Tenant(ctx, tenant)
	if err != nil {
		return owner, nil, err
	}
	var ids []int64
	for i := 0; i < n; i++ {
		rec, err := st.Create(ctx, st.Registry().Resource("messaging_channels"), owner, map[string]any{
			"name": fmt.Sprintf("sms%02d", i), "type": "sms", "provider": "twilio", "sender": "+27115550000",
			"rate_per_second": json.Number("100"),
			"credentials":     map[string]any{"account_sid": benchSid, "auth_token": benchToken},
		})
		if err != nil {
			return owner, nil, err
		}
		ids = append(ids, rec["id"].(int64))
	}
	return owner, ids, nil
}

func openLoopSends(ctx context.Context, base, key string, chIDs []int64, rate int, dur time.Duration) ([]time.Duration, int, time.Duration) {
	client := newClient(256)
	return openLoop(rate, dur, func(i int) error {
		body, _ := json.Marshal(map[string]any{"channel_id": chIDs[i%len(chIDs)], "to": "+27825550001", "body": fmt.Sprintf("Order %d is ready", i)})
		st, _, err := post(ctx, client, base+"/api/messaging/send", key, body)
		if err == nil && st != http.StatusAccepted {
			err = fmt.Errorf("status %d", st)
		}
		return err
	})
}

package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard/switchboard/internal/app"
	"github.com/switchboard/switchboard/internal/comms/chat"
)

// benchChat measures team chat against a running ejabberd (start one with
// deploy/ejabberd/start.sh): channel-message acceptance (POST
// /api/connect/message, open loop at a fixed rate) and provisioning agents
// (POST /api/connect/agent) with a few concurrent clients.
func benchChat(ctx context.Context, args []string) error {
	fl := flag.NewFlagSet("chat", flag.ContinueOnError)
	rate := fl.Int("rate", 200, "channel messages per second (open loop)")
	dur := fl.Duration("duration", 10*time.Second, "how long to send messages")
	agents := fl.Int("agents", 1000, "agents to provision")
	workers := fl.Int("workers", 8, "concurrent provisioning clients")
	hold := fl.Bool("hold", false, "hold the queue's worker off while messages are sent (acceptance alone, then the drain of the backlog)")
	var prof profiles
	prof.flags(fl)
	apiURL := fl.String("api", firstEnv("SWITCHBOARD_BENCH_CHAT_API_URL", "SWITCHBOARD_CHAT_API_URL"), "ejabberd mod_http_api URL")
	domain := fl.String("domain", firstEnv("SWITCHBOARD_BENCH_CHAT_DOMAIN", "SWITCHBOARD_CHAT_DOMAIN"), "XMPP domain")
	if err := fl.Parse(args); err != nil {
		return err
	}
	if *apiURL == "" {
		*apiURL, *domain = "http://127.0.0.1:5281/api", "localhost"
	}
	client := chat.NewClient(chat.Config{APIURL: *apiURL, Domain: *domain})
	if err := client.Status(ctx); err != nil {
		fmt.Printf("chat: skipped: no ejabberd at %s (bash deploy/ejabberd/start.sh): %v\n", *apiURL, err)
		return nil
	}
	b, err := openBackend(ctx)
	if err != nil {
		return err
	}
	defer b.close()
	// The bench takes the worker's lease itself (the name the queue of an
	// installation without an outbox group uses), so the server's worker
	// posts nothing until it is released.
	const leaseName, holdHolder = "chat-messages", "sbbench-hold"
	if *hold {
		if ok, err := b.st.TakeOutboxLease(ctx, leaseName, holdHolder, 10*time.Minute); err != nil || !ok {
			return fmt.Errorf("hold the chat queue's lease: %v (held by another replica?)", err)
		}
		defer func() { _ = b.st.ReleaseOutboxLease(context.WithoutCancel(ctx), leaseName, holdHolder) }()
	}
	env := map[string]string{
		"SWITCHBOARD_DATABASE_URL": b.dbURL,
		"SWITCHBOARD_LISTEN":       "127.0.0.1:0",
		"SWITCHBOARD_SECRET_KEY":   benchKey,
		"SWITCHBOARD_SIP_DOMAIN":   "sip.bench",
		"SWITCHBOARD_CHAT_API_URL": *apiURL,
		"SWITCHBOARD_CHAT_DOMAIN":  *domain,
		// One key sends 200/s and provisions in parallel: the benchmark
		// measures the chat path, not the per-key limit (100/s by default).
		"SWITCHBOARD_RATE_LIMIT": "0",
	}
	cfg, err := app.LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		return err
	}
	fapp, stopApp, err := app.Build(ctx, cfg, b.st, b.rdb, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return err
	}
	base, stop, err := listen(fapp, stopApp)
	if err != nil {
		return err
	}
	defer stop()
	pk, err := b.st.CreateKey(ctx, map[string]any{"name": "bench chat"}, "sbbench")
	if err != nil {
		return err
	}
	key := pk["key"].(string)
	tenant := fmt.Sprintf("bchat%06d", rand.IntN(1000000))
	hc := newClient(256)
	for _, s := range []struct{ path, body string }{
		{"/api/tenants/", `{"tenant":"` + tenant + `"}`},
		{"/api/tenants/" + tenant + "/chat_channels/", `{"name":"bench"}`},
	} {
		if st, data, err := post(ctx, hc, base+s.path, key, []byte(s.body)); err != nil || st != 201 {
			return fmt.Errorf("seed %s: %d %s %v", s.path, st, data, err)
		}
	}
	room := chat.RoomLocal(tenant, "bench")
	for deadline := time.Now().Add(30 * time.Second); ; {
		if _, err := client.RoomOptions(ctx, room); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("room %s never appeared on ejabberd", room)
		}
		time.Sleep(50 * time.Millisecond)
	}

	msgURL := base + "/api/connect/message/" + tenant
	body := []byte(`{"to":"bench","body":"benchmark message","from_name":"sbbench"}`)
	if err := prof.start(); err != nil {
		return err
	}
	defer prof.stop()
	cpu := startCPU()
	start := time.Now()
	ok, failed, elapsed := openLoop(*rate, *dur, func(int) error {
		st, data, err := post(ctx, hc, msgURL, key, body)
		if err == nil && st != 200 {
			err = fmt.Errorf("status %d: %s", st, data)
		}
		return err
	})
	fmt.Printf("chat: %d channel messages at %d/s open loop over %.1fs on %s (%d errors)\n", len(ok)+failed, *rate, elapsed.Seconds(), b.name, failed)
	fmt.Printf("  POST /api/connect/message (200):  p50 %.2f ms  p90 %.2f ms  p99 %.2f ms  max %.2f ms\n", ms(pctl(ok, 0.5)), ms(pctl(ok, 0.9)), ms(pctl(ok, 0.99)), ms(pctl(ok, 1)))
	if *hold {
		cpu.report(len(ok)) // acceptance alone: nothing was posted yet
	}
	if *hold {
		if err := b.st.ReleaseOutboxLease(ctx, leaseName, holdHolder); err != nil {
			return err
		}
		start = time.Now()
	}
	// Accepted is not posted: wait for the queue's worker to post every
	// accepted message to ejabberd.
	for {
		var left int
		if err := b.st.Querier().GetContext(ctx, &left, "SELECT COUNT(*) FROM chat_outbox"); err != nil {
			return err
		}
		if left == 0 {
			break
		}
		if time.Since(start) > *dur+2*time.Minute {
			return fmt.Errorf("%d accepted channel messages still not posted to ejabberd", left)
		}
		time.Sleep(10 * time.Millisecond)
	}
	took := time.Since(start)
	if !*hold {
		cpu.report(len(ok)) // acceptance and posting, until the queue was empty
	}
	if err := prof.stop(); err != nil {
		return err
	}
	if *hold {
		fmt.Printf("  the held backlog of %d messages posted to ejabberd %.2fs after the worker's lease was released (%.0f msg/s, including up to 5 s until the worker retries the lease)\n", len(ok), took.Seconds(), float64(len(ok))/took.Seconds())
	} else {
		fmt.Printf("  all %d accepted messages posted to ejabberd %.2fs after the first send (%.0f msg/s; %.2fs after the last answer)\n", len(ok), took.Seconds(), float64(len(ok))/took.Seconds(), (took - elapsed).Seconds())
	}

	var wg sync.WaitGroup
	var next, perr atomic.Int64
	var firstErr atomic.Value
	start = time.Now()
	for w := 0; w < *workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(*agents) {
					return
				}
				st, data, err := post(ctx, hc, base+"/api/connect/agent/"+tenant, key, []byte(fmt.Sprintf(`{"extension":"%d"}`, 20000+i)))
				if err != nil || st != 201 {
					perr.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Sprintf("%d %s %v", st, data, err))
				}
			}
		}()
	}
	wg.Wait()
	took = time.Since(start)
	fmt.Printf("  provisioned %d agents with %d clients in %.1fs (%.0f/s, %d errors)\n", *agents, *workers, took.Seconds(), float64(*agents)/took.Seconds(), perr.Load())
	if e := firstErr.Load(); e != nil {
		fmt.Println("  first provisioning error:", e)
	}
	// Leave ejabberd as it was: the tenant's rooms and accounts go with it.
	if st, data, err := do2(ctx, hc, "DELETE", base+"/api/tenants/"+tenant, key); err != nil || st != 204 {
		fmt.Printf("  cleanup: delete tenant: %d %s %v\n", st, data, err)
	}
	return chat.NewSync(client, b.st, slog.New(slog.NewTextHandler(io.Discard, nil))).All(ctx)
}

func post(ctx context.Context, c *http.Client, url, key string, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Content-Type", "application/json")
	return send(c, req)
}

func do2(ctx context.Context, c *http.Client, method, url, key string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("X-API-Key", key)
	return send(c, req)
}

func send(c *http.Client, req *http.Request) (int, []byte, error) {
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboard/switchboard/internal/app"
	"github.com/switchboard/switchboard/internal/freeswitch/esl/fakefs"
)

// benchCall sends POST /api/telephony/call open-loop at a fixed rate to
// the real server wired to a fake FreeSWITCH, and measures two latencies
// per call: the HTTP answer, and from sending the request to the bgapi
// originate line passing a sniffing proxy in front of the fake's socket.
func benchCall(ctx context.Context, args []string) error {
	fl := flag.NewFlagSet("call", flag.ContinueOnError)
	rate := fl.Int("rate", 200, "requests per second (open loop)")
	dur := fl.Duration("duration", 10*time.Second, "how long to send")
	if err := fl.Parse(args); err != nil {
		return err
	}
	b, err := openBackend(ctx)
	if err != nil {
		return err
	}
	defer b.close()
	fs := fakefs.New(fakefs.Options{Hostname: "bench1", RingDelay: 2 * time.Second})
	if err := fs.Start("127.0.0.1:0"); err != nil {
		return err
	}
	defer fs.Close()
	px, err := newSniffer(fs.Addr())
	if err != nil {
		return err
	}
	defer px.close()

	base, stop, err := startCallServer(ctx, b, px.addr())
	if err != nil {
		return err
	}
	defer stop()
	userKey, err := seedCaller(ctx, b, base)
	if err != nil {
		return err
	}
	if err := waitUp(ctx, base, userKey); err != nil {
		return err
	}

	client := newClient(256)
	body := []byte(`{"from":"+27825550001","to":"+442071234567"}`)
	n := int(dur.Seconds() * float64(*rate))
	httpLat := make([]time.Duration, n)
	sent := make([]time.Time, n)
	uuids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < n; i++ {
		at := start.Add(time.Duration(i) * time.Second / time.Duration(*rate))
		time.Sleep(time.Until(at))
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sent[i] = time.Now()
			uuids[i], errs[i] = placeCall(ctx, client, base, userKey, body)
			httpLat[i] = time.Since(sent[i])
		}(i)
	}
	wg.Wait()
	elapsed := time.Since(start)
	time.Sleep(200 * time.Millisecond)
	var wire, okHTTP []time.Duration
	failed := 0
	for i := 0; i < n; i++ {
		if errs[i] != nil {
			failed++
			if failed == 1 {
				fmt.Println("first error:", errs[i])
			}
			continue
		}
		okHTTP = append(okHTTP, httpLat[i])
		if at, ok := px.seen(uuids[i]); ok {
			wire = append(wire, at.Sub(sent[i]))
		}
	}
	slices.Sort(wire)
	slices.Sort(okHTTP)
	fmt.Printf("call: %d POST /api/telephony/call at %d/s open loop over %.1fs on %s (%d errors, %d originates seen on the wire)\n",
		n, *rate, elapsed.Seconds(), b.name, failed, len(wire))
	fmt.Printf("  request sent -> bgapi originate at the fake: p50 %.2f ms  p99 %.2f ms  max %.2f ms\n", ms(pctl(wire, 0.5)), ms(pctl(wire, 0.99)), ms(pctl(wire, 1)))
	fmt.Printf("  HTTP answer (202):                        p50 %.2f ms  p99 %.2f ms  max %.2f ms\n", ms(pctl(okHTTP, 0.5)), ms(pctl(okHTTP, 0.99)), ms(pctl(okHTTP, 1)))
	return nil
}

func pctl(s []time.Duration, p float64) time.Duration {
	if len(s) == 0 {
		return 0
	}
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

func placeCall(ctx context.Context, c *http.Client, base, key string, body []byte) (string, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", base+"/api/telephony/call", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 202 {
		return "", fmt.Errorf("status %d: %s", resp.StatusCode, data)
	}
	var out struct {
		UUID string `json:"uuid"`
	}
	err = json.Unmarshal(data, &out)
	return out.UUID, err
}

// startCallServer runs the real server with the fake as its only node.
func startCallServer(ctx context.Context, b *backend, node string) (string, func(), error) {
	return startBenchServer(ctx, b, map[string]string{
		"SWITCHBOARD_ESL_NODES":  node,
		"SWITCHBOARD_RATE_LIMIT": "0", // the benchmark drives one key at 200 requests/s
	})
}

// startBenchServer builds the app as serve does over the bench backend, with
// extra configuration, and serves it on a loopback port.
func startBenchServer(ctx context.Context, b *backend, extra map[string]string) (string, func(), error) {
	env := map[string]string{
		"SWITCHBOARD_DATABASE_URL": b.dbURL,
		"SWITCHBOARD_LISTEN":       "127.0.0.1:0",
		"SWITCHBOARD_SECRET_KEY":   benchKey,
		"SWITCHBOARD_SIP_DOMAIN":   "sip.bench",
	}
	for k, v := range extra {
		env[k] = v
	}
	cfg, err := app.LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		return "", nil, err
	}
	fapp, stop, err := app.Build(ctx, cfg, b.st, b.rdb, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return "", nil, err
	}
	return listen(fapp, stop)
}

// seedCaller creates a tenant, extension 1001 with a mobile, and a user
// key bound to it, through the API.
func seedCaller(ctx context.Context, b *backend, base string) (string, error) {
	pk, err := b.st.CreateKey(ctx, map[string]any{"name": "bench platform"}, "sbbench")
	if err != nil {
		return "", err
	}
	platform := pk["key"].(string)
	tenant := fmt.Sprintf("bcall%06d", rand.IntN(1000000))
	steps := []struct {
		path string
		body string
	}{
		{"/api/tenants/", `{"tenant":"` + tenant + `"}`},
		{"/api/tenants/" + tenant + "/extensions/", `{"name":"1001","mobile":"+27825550001"}`},
		{"/api/key/", `{"name":"bench caller","tenant":"` + tenant + `","extension":"1001"}`},
	}
	var last map[string]any
	for _, s := range steps {
		req, _ := http.NewRequestWithContext(ctx, "POST", base+s.path, strings.NewReader(s.body))
		req.Header.Set("X-API-Key", platform)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 201 {
			return "", fmt.Errorf("seed %s: %d %s", s.path, resp.StatusCode, data)
		}
		last = map[string]any{}
		_ = json.Unmarshal(data, &last)
	}
	return last["key"].(string), nil
}

// waitUp waits until the server has a FreeSWITCH connection (a call
// answers 202), and warms the connections up.
func waitUp(ctx context.Context, base, key string) error {
	c := newClient(4)
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := placeCall(ctx, c, base, key, []byte(`{"from":"+27825550001","to":"1"}`))
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("server never reached the fake: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sniffer is a TCP proxy in front of the fake that timestamps each bgapi
// originate line by its origination_uuid as it passes.
type sniffer struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	at     map[string]time.Time
}

func newSniffer(target string) (*sniffer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &sniffer{ln: ln, target: target, at: map[string]time.Time{}}
	go s.serve()
	return s, nil
}

func (s *sniffer) addr() string { return s.ln.Addr().String() }
func (s *sniffer) close()       { s.ln.Close() }

func (s *sniffer) seen(uuid string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.at[uuid]
	return t, ok
}

func (s *sniffer) serve() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", s.target)
		if err != nil {
			c.Close()
			continue
		}
		go func() { io.Copy(c, up); c.Close() }()
		go s.upstream(c, up)
	}
}

// upstream copies client bytes to the fake line by line, noting originates.
func (s *sniffer) upstream(c, up net.Conn) {
	defer up.Close()
	rd := bufio.NewReader(c)
	const marker = "bgapi originate {^^;origination_uuid="
	for {
		line, err := rd.ReadSlice('\n')
		if len(line) > 0 {
			if bytes.HasPrefix(line, []byte(marker)) {
				rest := line[len(marker):]
				if i := bytes.IndexAny(rest, ";}"); i > 0 {
					now := time.Now()
					s.mu.Lock()
					s.at[string(rest[:i])] = now
					s.mu.Unlock()
				}
			}
			if _, werr := up.Write(line); werr != nil {
				return
			}
		}
		if err != nil && err != bufio.ErrBufferFull {
			return
		}
	}
}

package main_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/platform/wait"
)

// TestEndToEnd builds the binary, runs `serve` on a temporary SQLite file,
// drives the API over HTTP, restarts the process and finds the data there.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := buildBinary(t)
	addr := freeAddr(t)
	env := append(os.Environ(),
		"SWITCHBOARD_DATABASE_URL=sqlite:"+filepath.Join(dir, "data", "sb.db"),
		"SWITCHBOARD_LISTEN="+addr,
		"SWITCHBOARD_REDIS_URL=",
		"SWITCHBOARD_SECRET_KEY=",
		"SWITCHBOARD_ESL_NODES=",
		"SWITCHBOARD_LOG_LEVEL=warn",
	)
	run := func(args ...string) string {
		cmd := exec.Command(bin, args...)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr.String())
		}
		return stdout.String()
	}
	key := strings.TrimSpace(run("key", "create", "--name", "e2e"))
	if !strings.HasPrefix(key, "sb_") || strings.Contains(key, "\n") {
		t.Fatalf("key create must print the key alone on one line, got %q", key)
	}
	run("admin", "create", "--username", "root", "--password", "a long enough password")
	spare := strings.TrimSpace(run("key", "create", "--name", "to-revoke"))
	adminStdin := exec.Command(bin, "admin", "create", "--username", "ops", "--password-stdin")
	adminStdin.Env, adminStdin.Stdin = env, strings.NewReader("password from stdin\n")
	if out, err := adminStdin.CombinedOutput(); err != nil {
		t.Fatalf("admin create --password-stdin: %v\n%s", err, out)
	}

	stop := start(t, bin, env, addr)
	base := "http://" + addr
	call(t, "POST", base+"/api/tenants/", key, `{"tenant":"acme","callerid":"+27110001111"}`, 201)
	call(t, "POST", base+"/api/tenants/acme/extensions/", key, `{"name":"1001","first_name":"Eve"}`, 201)
	req, _ := http.NewRequest("GET", base+"/api/tenants/acme/extensions/", nil)
	req.SetBasicAuth("root", "a long enough password")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("basic auth as the created administrator: %v %v", err, resp)
	}
	req.SetBasicAuth("ops", "password from stdin")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("basic auth with the password read from stdin: %v %v", err, resp)
	}
	call(t, "GET", base+"/api/tenants/", spare, "", 200)
	run("key", "revoke", "2") // key ids: 1 = e2e, 2 = to-revoke, while the server runs
	call(t, "GET", base+"/api/tenants/", spare, "", 401)
	call(t, "GET", base+"/api/tenants/", key, "", 200)
	stop()

	stop = start(t, bin, env, addr)
	defer stop()
	body := call(t, "GET", base+"/api/tenants/acme/extensions/", key, "", 200)
	var exts []map[string]any
	if err := json.Unmarshal(body, &exts); err != nil || len(exts) != 1 || exts[0]["first_name"] != "Eve" {
		t.Fatalf("after restart: %s (%v)", body, err)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// start runs serve and waits until /readyz answers; the returned func sends
// SIGTERM and waits for a clean exit.
func start(t *testing.T, bin string, env []string, addr string) func() {
	t.Helper()
	cmd := exec.Command(bin, "serve")
	cmd.Env = env
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("server not ready: %v\n%s", err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve exited with %v after SIGTERM\n%s", err, logs.String())
			}
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Errorf("serve did not stop on SIGTERM\n%s", logs.String())
		}
	}
}

func call(t *testing.T, method, url, key, body string, want int) []byte {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, url, resp.StatusCode, want, data)
	}
	return data
}

// TestGracefulShutdownDrains: on SIGTERM the replica first leaves the
// load balancer (readiness answers 503 "draining" while requests are
// still served), then event streams end so their clients reconnect
// elsewhere, then the listener closes: the process does not wait out the
// grace period for streams that never end.
func TestGracefulShutdownDrains(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := buildBinary(t)
	addr := freeAddr(t)
	env := append(os.Environ(),
		"SWITCHBOARD_DATABASE_URL=sqlite:"+filepath.Join(dir, "sb.db"),
		"SWITCHBOARD_LISTEN="+addr,
		"SWITCHBOARD_REDIS_URL=",
		"SWITCHBOARD_SECRET_KEY=",
		"SWITCHBOARD_ESL_NODES=",
		"SWITCHBOARD_LOG_LEVEL=warn",
		"SWITCHBOARD_SHUTDOWN_DRAIN=2s",
	)
	keyCmd := exec.Command(bin, "key", "create", "--name", "drain")
	keyCmd.Env = env
	out, err := keyCmd.Output()
	if err != nil {
		t.Fatalf("key create: %v", err)
	}
	key := strings.TrimSpace(string(out))
	cmd := exec.Command(bin, "serve")
	cmd.Env = env
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() { _ = cmd.Process.Kill() }()
	base := "http://" + addr
	status := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	wait.Until(t, 20*time.Second, "the server ready", func() bool { code, _ := status("/readyz"); return code == 200 })

	req, _ := http.NewRequest("GET", base+"/api/telephony/events", nil)
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Accept", "text/event-stream")
	stream, err := http.DefaultClient.Do(req)
	if err != nil || stream.StatusCode != 200 {
		t.Fatalf("event stream: %v %v", err, stream)
	}
	streamEnded := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, stream.Body); close(streamEnded) }()

	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	wait.Until(t, 2*time.Second, "readiness to answer draining", func() bool {
		code, body := status("/readyz")
		return code == 503 && strings.Contains(body, `"draining"`)
	})
	if code, _ := status("/healthz"); code != 200 {
		t.Errorf("requests are no longer served while draining: /healthz %d", code)
	}
	select {
	case <-streamEnded:
	case <-time.After(10 * time.Second):
		t.Fatal("the event stream did not end after the drain")
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("serve exited with %v\n%s", err, logs.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("serve did not exit after the drain\n%s", logs.String())
	}
	if took := time.Since(sent); took < 2*time.Second || took > 12*time.Second {
		t.Errorf("shutdown took %v: want the 2 s drain and not the 15 s grace", took)
	}
}

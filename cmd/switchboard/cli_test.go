package main_test

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testCommit is linked into the test binary the way `make build` links the
// real commit, so `version` can be checked for it.
const testCommit = "0123456789abcdef-test"

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
)

// buildBinary builds the switchboard binary once per test run.
func buildBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "switchboard-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "switchboard")
		cmd := exec.Command("go", "build", "-ldflags", "-X github.com/switchboard/switchboard/internal/app.Commit="+testCommit, "-o", builtBin, ".")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = errors.New(err.Error() + "\n" + string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("build: %v", buildErr)
	}
	return builtBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

type cliResult struct {
	stdout, stderr string
	code           int
}

// runCLI runs the binary with a private data directory and a 10 s limit (a
// command that starts a server instead of answering would hit it).
func runCLI(t *testing.T, dataDir, stdin string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(buildBinary(t), args...)
	cmd.Env = append(os.Environ(),
		"SWITCHBOARD_DATABASE_URL=sqlite:"+filepath.Join(dataDir, "data", "sb.db"),
		"SWITCHBOARD_LISTEN="+freeAddr(t),
		"SWITCHBOARD_REDIS_URL=", "SWITCHBOARD_SECRET_KEY=", "SWITCHBOARD_ESL_NODES=",
		"SWITCHBOARD_LOG_LEVEL=warn",
	)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%v did not finish in 10 s (started something?)\nstdout: %s\nstderr: %s", args, stdout.String(), stderr.String())
	}
	return cliResult{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
}

func TestCLIHelpOnEveryCommandExitsZeroWithoutStarting(t *testing.T) {
	commands := [][]string{
		{}, {"serve"}, {"migrate"}, {"admin"}, {"admin", "create"}, {"key"}, {"key", "create"},
		{"key", "list"}, {"key", "revoke"}, {"sim"}, {"schema-sql"}, {"version"}, {"health"},
		{"import"}, {"import", "cdrs"},
	}
	for _, path := range commands {
		for _, help := range []string{"--help", "-h"} {
			dir := t.TempDir()
			args := append(append([]string{}, path...), help)
			r := runCLI(t, dir, "", args...)
			want := strings.TrimSpace("Usage: switchboard " + strings.Join(path, " "))
			if r.code != 0 || !strings.HasPrefix(r.stdout, want) || r.stderr != "" {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 0 and usage starting %q", args, r.code, r.stdout, r.stderr, want)
			}
			if _, err := os.Stat(filepath.Join(dir, "data")); !os.IsNotExist(err) {
				t.Errorf("%v created the data directory (it started something): %v", args, err)
			}
		}
	}
	// `help CMD` is the same as `CMD --help`.
	if r := runCLI(t, t.TempDir(), "", "help", "key", "list"); r.code != 0 || !strings.HasPrefix(r.stdout, "Usage: switchboard key list") {
		t.Errorf("help key list: exit %d, %q", r.code, r.stdout)
	}
}

func TestCLIMistakesExitTwoWithUsageOnStderr(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"bogus"}, "unexpected argument bogus"},
		{[]string{"key", "create"}, "missing flags: --name"},
		{[]string{"key", "revoke"}, "expected \"<id>\""},
		{[]string{"admin", "create", "--username", "ops", "--password", "x", "--password-stdin"}, "--password and --password-stdin can't be used together"},
		{[]string{"sim", "--calls-per-second", "0"}, "must be positive"},
		{[]string{"import", "cdrs", "--tenant", "acme"}, "expected \"<file>\""},
		{[]string{"import", "cdrs", "/nonexistent/cdrs.csv", "--tenant", "acme"}, "/nonexistent/cdrs.csv"},
	}
	for _, c := range cases {
		r := runCLI(t, t.TempDir(), "", c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || r.stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q on stderr", c.args, r.code, r.stdout, r.stderr, c.want)
		}
	}
}

func TestCLIVersionPrintsTheLinkedCommit(t *testing.T) {
	r := runCLI(t, t.TempDir(), "", "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "switchboard dev commit "+testCommit+" ") {
		t.Fatalf("version: exit %d, %q", r.code, r.stdout)
	}
}

func TestCLIKeyListAndRevoke(t *testing.T) {
	dir := t.TempDir()
	a := strings.TrimSpace(runCLI(t, dir, "", "key", "create", "--name", "alpha").stdout)
	runCLI(t, dir, "", "key", "create", "--name", "beta")
	list := runCLI(t, dir, "", "key", "list")
	if list.code != 0 || !strings.Contains(list.stdout, "alpha") || !strings.Contains(list.stdout, "beta") ||
		!strings.Contains(list.stdout, a[:8]) || strings.Contains(list.stdout, a) {
		t.Fatalf("key list must show both keys by name and prefix, never the value: exit %d\n%s", list.code, list.stdout)
	}
	if r := runCLI(t, dir, "", "key", "revoke", "1"); r.code != 0 || !strings.Contains(r.stderr, "key 1 revoked") {
		t.Fatalf("key revoke 1: exit %d, %q", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(runCLI(t, dir, "", "key", "list").stdout), "\n")
	if len(lines) != 3 || strings.HasSuffix(strings.TrimSpace(lines[1]), " -") || !strings.HasSuffix(strings.TrimSpace(lines[2]), " -") {
		t.Fatalf("after revoking key 1, its REVOKED column has a time and key 2's is '-':\n%s", strings.Join(lines, "\n"))
	}
	if r := runCLI(t, dir, "", "key", "revoke", "999"); r.code != 1 || !strings.Contains(r.stderr, "no key with id 999") {
		t.Fatalf("key revoke 999: exit %d, %q", r.code, r.stderr)
	}
}

func TestCLIHealthExitCodes(t *testing.T) {
	// The handler runs on the server's goroutines; the CLI process in
	// between gives the race detector no ordering, hence atomic.
	var status atomic.Int32
	status.Store(http.StatusOK)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(int(status.Load()))
	}))
	defer srv.Close()
	if r := runCLI(t, t.TempDir(), "", "health", "--url", srv.URL+"/readyz"); r.code != 0 || r.stdout != "ok\n" {
		t.Errorf("ready: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	status.Store(http.StatusServiceUnavailable)
	if r := runCLI(t, t.TempDir(), "", "health", "--url", srv.URL+"/readyz"); r.code != 1 || !strings.Contains(r.stderr, "answered 503") {
		t.Errorf("not ready: exit %d, %q", r.code, r.stderr)
	}
	// Nothing listening: exit 1.
	if r := runCLI(t, t.TempDir(), "", "health", "--url", "http://"+freeAddr(t)+"/readyz"); r.code != 1 {
		t.Errorf("nothing listening: exit %d, %q", r.code, r.stderr)
	}
}

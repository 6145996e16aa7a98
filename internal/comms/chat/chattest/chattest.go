// Package chattest runs a private ejabberd for tests: the project's shipped
// configuration (deploy/ejabberd/ejabberd.yml) with its macro block
// rewritten to free loopback ports, in its own directory (spool, logs,
// Erlang node name), started through Debian's ejabberdctl exactly as an
// operator would. Without ejabberd installed the test is skipped, or fails
// when CI is set.
package chattest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/models/storetest"
)

// Server is one running private ejabberd.
type Server struct {
	Domain    string
	MUCDomain string
	APIURL    string // mod_http_api, e.g. http://127.0.0.1:40123/api
	WSURL     string // XMPP over WebSocket, ws://127.0.0.1:40124/ws
	C2SAddr   string

	dir, node string
	cmd       *exec.Cmd
	done      chan struct{}
	t         testing.TB
}

// ctlPath is Debian's control script.
var ctlPath = "/usr/sbin/ejabberdctl"

// Start launches a private ejabberd serving domain and stops it when the
// test ends.
//
// A run that only repeats the per-backend tests (storetest.PerBackendOnly:
// make test's SQLite pass) skips: ejabberd is the same whatever the
// database, and private ejabberds starting in two passes at once on a
// loaded two-core machine were slow enough to fail tests (rooms not there
// within 20 s), so the chat tests run once, in the -race pass.
func Start(t testing.TB, domain string) *Server {
	t.Helper()
	if storetest.PerBackendOnly() {
		t.Skip("ejabberd tests run once, in the pass beside this one")
	}
	if _, err := os.Stat(ctlPath); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("ejabberd is not installed (%s): CI must install the ejabberd package", ctlPath)
		}
		t.Skipf("ejabberd not installed (%s); apt-get install ejabberd to run chat tests", ctlPath)
	}
	conf, err := shippedConfig()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "sb-ejabberd-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	s := &Server{Domain: domain, MUCDomain: "conference." + domain, dir: dir, t: t}
	for _, sub := range []string{"spool", "log"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The ports are free when chosen but not held: another process (a
	// test beside this one dialling out, or listening) may take one before
	// ejabberd binds it. Then it starts again on other ports.
	for attempt := 1; ; attempt++ {
		s.configure(t, conf, pickPorts(t, 3))
		err := s.start()
		if err == nil {
			break
		}
		if attempt == 3 || !strings.Contains(err.Error(), "eaddrinuse") {
			t.Fatal(err)
		}
		t.Logf("ejabberd start, attempt %d: a port was taken; trying other ports", attempt)
		// Whatever of it still runs goes, and so does its Mnesia spool,
		// which is bound to the node name (the next one differs).
		s.Stop()
		spool := filepath.Join(dir, "spool")
		if err := os.RemoveAll(spool); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(spool, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(s.Stop)
	return s
}

// configure writes the server's configuration for these ports (c2s,
// WebSocket, API) into its directory.
func (s *Server) configure(t testing.TB, conf string, ports []int) {
	t.Helper()
	s.APIURL = fmt.Sprintf("http://127.0.0.1:%d/api", ports[2])
	s.WSURL = fmt.Sprintf("ws://127.0.0.1:%d/ws", ports[1])
	s.C2SAddr = fmt.Sprintf("127.0.0.1:%d", ports[0])
	s.node = fmt.Sprintf("sbtest%d_%d@localhost", os.Getpid(), ports[0])
	conf = rewriteMacros(conf, map[string]string{
		"SB_DOMAIN":     s.Domain,
		"SB_MUC_DOMAIN": s.MUCDomain,
		"SB_C2S_PORT":   strconv.Itoa(ports[0]),
		"SB_WS_PORT":    strconv.Itoa(ports[1]),
		"SB_API_PORT":   strconv.Itoa(ports[2]),
	})
	// ejabberd writes its Erlang VM's process id here: su puts the VM in a
	// session of its own, out of reach of a process-group signal.
	ctlCfg := "EJABBERD_PID_PATH=" + filepath.Join(s.dir, "ejabberd.pid") + "\n"
	files := map[string]string{"ejabberd.yml": conf, "ejabberdctl.cfg": ctlCfg, "inetrc": "{lookup,[\"file\",\"native\"]}.\n"}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(s.dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	chownToEjabberd(t, s.dir)
}

// Restart starts the server again (same ports, same spool) after Stop.
func (s *Server) Restart() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatal(err)
	}
}

// start runs ejabberd and waits until its API answers; an error carries
// the end of its console log.
func (s *Server) start() error {
	cmd := exec.Command(ctlPath,
		"--config-dir", s.dir,
		"--ctl-config", filepath.Join(s.dir, "ejabberdctl.cfg"),
		"--config", filepath.Join(s.dir, "ejabberd.yml"),
		"--spool", filepath.Join(s.dir, "spool"),
		"--logs", filepath.Join(s.dir, "log"),
		"--node", s.node,
		"foreground")
	cmd.Dir = s.dir
	out, err := os.Create(filepath.Join(s.dir, "log", "console.txt"))
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group: Stop signals su, the shell and the Erlang VM together.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start ejabberd: %w", err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); out.Close(); close(s.done) }()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if s.vmPID() > 0 && s.ready() {
			return nil
		}
		select {
		case <-s.done:
			log, _ := os.ReadFile(filepath.Join(s.dir, "log", "console.txt"))
			return fmt.Errorf("ejabberd exited during start:\n%s", tail(string(log), 3000))
		case <-time.After(200 * time.Millisecond):
		}
	}
	log, _ := os.ReadFile(filepath.Join(s.dir, "log", "console.txt"))
	s.Stop()
	return fmt.Errorf("ejabberd did not answer on %s within 30s:\n%s", s.APIURL, tail(string(log), 3000))
}

// ready reports whether the HTTP API answers a status command.
func (s *Server) ready() bool {
	// A timeout: whatever else holds a port ejabberd could not bind may
	// never answer.
	client := &http.Client{Timeout: 2 * time.Second}
	resp, err := client.Post(s.APIURL+"/status", "application/json", strings.NewReader("{}"))
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Stop ends the server the way an operator's SIGTERM does (ejabberd shuts
// down cleanly, flushing its database) and waits until the VM has exited.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	pid := s.vmPID()
	if pid > 0 {
		_ = syscall.Kill(pid, syscall.SIGTERM)
		for i := 0; i < 300 && syscall.Kill(pid, 0) == nil; i++ {
			time.Sleep(50 * time.Millisecond)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
	_ = os.Remove(filepath.Join(s.dir, "ejabberd.pid"))
}

// vmPID reads the Erlang VM's process id from the pid file.
func (s *Server) vmPID() int {
	b, err := os.ReadFile(filepath.Join(s.dir, "ejabberd.pid"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// LogTail returns the end of the server's log, for failure messages:
// its warnings and errors (the info entries are mostly the API calls of
// the test's own polling), and the last few entries whatever their level.
func (s *Server) LogTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "log", "ejabberd.log"))
	// An entry starts with its time stamp; its next lines are indented.
	text := string(b)
	var entries []string
	starts := entryStart.FindAllStringIndex(text, -1)
	for i, st := range starts {
		end := len(text)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		entries = append(entries, text[st[0]:end])
	}
	var keep []string
	for i, e := range entries {
		if i >= len(entries)-5 || !strings.Contains(e, "[info]") && !strings.Contains(e, "[debug]") {
			keep = append(keep, e)
		}
	}
	return tail(strings.Join(keep, ""), 8000)
}

// entryStart is where an ejabberd log entry begins: its time stamp.
var entryStart = regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d `)

// shippedConfig finds deploy/ejabberd/ejabberd.yml above the working directory.
func shippedConfig() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, "deploy", "ejabberd", "ejabberd.yml")
		if b, err := os.ReadFile(p); err == nil {
			return string(b), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("deploy/ejabberd/ejabberd.yml not found above the working directory")
		}
		dir = parent
	}
}

// rewriteMacros replaces the values of the define_macro entries named in vals.
func rewriteMacros(conf string, vals map[string]string) string {
	for name, v := range vals {
		re := regexp.MustCompile(`(?m)^(\s+` + name + `:) .*$`)
		conf = re.ReplaceAllString(conf, "${1} "+v)
	}
	return conf
}

// pickPorts chooses ejabberd's ports (a test takes one away).
var pickPorts = freePorts

// freePorts chooses n ports free now, below the range the kernel hands out
// to outgoing connections (ip_local_port_range): a port from that range,
// free while ejabberd is stopped for an outage, was taken by a connection
// dialling out meanwhile, and the restart on the same ports then failed
// (eaddrinuse, TestIncomingWebhookOversizeAndChatServerDown). Below it,
// only a listener choosing that very port could take one.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	low := ephemeralLow()
	var out []int
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for tries := 0; len(out) < n; tries++ {
		if tries == 1000 {
			t.Fatalf("no %d free ports below %d", n, low)
		}
		port := minPort + rand.IntN(low-minPort)
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue // in use: another
		}
		lns = append(lns, ln)
		out = append(out, port)
	}
	return out
}

// minPort is the lowest port freePorts chooses: above the well-known and
// the usual registered services' ports.
const minPort = 20000

// ephemeralLow is the first port of the kernel's range for outgoing
// connections (32768 when it cannot be read, Linux's default).
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 32768
	}
	fields := strings.Fields(string(b))
	if len(fields) != 2 {
		return 32768
	}
	low, err := strconv.Atoi(fields[0])
	if err != nil || low <= minPort+1000 {
		return 32768
	}
	return low
}

// chownToEjabberd hands the directory to the ejabberd user when running as
// root: Debian's ejabberdctl then runs the VM as that user (su).
func chownToEjabberd(t testing.TB, dir string) {
	if os.Geteuid() != 0 {
		return
	}
	u, err := user.Lookup("ejabberd")
	if err != nil {
		t.Fatalf("ejabberd user: %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	_ = filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			err = os.Chown(p, uid, gid)
		}
		return err
	})
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// WaitFor polls cond until it holds or the timeout passes.
func WaitFor(ctx context.Context, timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
	return cond()
}

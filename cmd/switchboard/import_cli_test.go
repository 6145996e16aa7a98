package main_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/models"
)

// syncBuffer is a bytes.Buffer a process writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// openCLIStore opens the SQLite database the CLI runs use in dir.
func openCLIStore(t *testing.T, dir string) *models.Store {
	t.Helper()
	reg, err := models.NewRegistry(models.Resources)
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := models.NewSealer([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := models.Open(context.Background(), "sqlite:"+filepath.Join(dir, "data", "sb.db"), reg, sealer)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// importedCDRs counts the tenant's imported CDRs, and how many distinct
// external ids they carry.
func importedCDRs(t *testing.T, dir, tenant string) (rows, distinct int) {
	t.Helper()
	st := openCLIStore(t, dir)
	defer st.Close()
	if err := st.Querier().QueryRowContext(context.Background(), "SELECT COUNT(*), COUNT(DISTINCT channel_id) FROM cdrs WHERE tenant = ? AND node = 'import'", tenant).Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	return rows, distinct
}

// TestCLIImportCDRsResumesWithoutDuplicates: `switchboard import cdrs FILE
// --tenant T` shows a progress bar and stores the file's CDRs; interrupted
// (SIGINT) part-way, it says where it stopped, and the same command run
// again continues that job to the end; a run over a complete import adds
// nothing (every row a duplicate). The table holds each CDR once.
func TestCLIImportCDRsResumesWithoutDuplicates(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary over 60,000 rows")
	}
	dir := t.TempDir()
	if r := runCLI(t, dir, "", "migrate"); r.code != 0 {
		t.Fatalf("migrate: exit %d %s", r.code, r.stderr)
	}
	st := openCLIStore(t, dir)
	if _, err := st.Create(context.Background(), st.Registry().Resource("tenants"), models.Owner{}, map[string]any{"tenant": "acme", "callerid": "+27110000000"}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	// 60,000 JSON Lines records (about 10 MB), the 1000th of each
	// thousand refused (bad direction).
	const total, refused = 60_000, 60
	file := filepath.Join(dir, "old-pbx.jsonl")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range total {
		dir := "outbound"
		if i%1000 == 999 {
			dir = "sideways"
		}
		fmt.Fprintf(w, `{"external_id":"cli-%d","start":"%s","duration":60,"billsec":30,"src":"1001","dst":"+2721555%04d","direction":"%s","disposition":"answered"}`+"\n",
			i, base.Add(time.Duration(i)*time.Second).Format(time.RFC3339), i%10000, dir)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	env := append(os.Environ(),
		"SWITCHBOARD_DATABASE_URL=sqlite:"+filepath.Join(dir, "data", "sb.db"),
		"SWITCHBOARD_MEDIA_DIR="+filepath.Join(dir, "media"),
		"SWITCHBOARD_REDIS_URL=", "SWITCHBOARD_SECRET_KEY=", "SWITCHBOARD_ESL_NODES=", "SWITCHBOARD_LOG_LEVEL=warn",
	)
	importCmd := func() (*exec.Cmd, *syncBuffer, *syncBuffer) {
		cmd := exec.Command(buildBinary(t), "import", "cdrs", file, "--tenant", "acme")
		cmd.Env = env
		var stdout, stderr syncBuffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		return cmd, &stdout, &stderr
	}
	wait := func(cmd *exec.Cmd, limit time.Duration) int {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(limit):
			cmd.Process.Kill()
			<-done
			t.Fatalf("import did not finish in %s", limit)
		}
		return cmd.ProcessState.ExitCode()
	}

	// First run: interrupted once the bar shows progress.
	cmd, stdout, stderr := importCmd()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	progress := regexp.MustCompile(`job 1 +[1-9]\d*% \|`)
	deadline := time.Now().Add(60 * time.Second)
	for !progress.MatchString(stderr.String()) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no progress bar in 60 s: %q", stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code := wait(cmd, 60*time.Second)
	stopped := regexp.MustCompile(`import job 1 interrupted after row (\d+); run the same command again to continue`).FindStringSubmatch(stderr.String())
	if code != 1 || stopped == nil || stdout.String() != "" {
		t.Fatalf("interrupted run: exit %d, stdout %q, stderr %q; want exit 1 saying where it stopped", code, stdout.String(), stderr.String())
	}
	if !regexp.MustCompile(`job 1 +[1-9]\d*% \|[^\r]*\([\d.]+( [kM]?B)?/10 MB, [\d.]+ [kM]?B/s\)`).MatchString(stderr.String()) {
		t.Errorf("the progress bar shows no sizes done and in all: %q", stderr.String())
	}
	mid, distinct := importedCDRs(t, dir, "acme")
	if mid == 0 || mid >= total-refused || mid != distinct {
		t.Fatalf("after the interruption %d CDRs stored (%d distinct); want some, not all, each once", mid, distinct)
	}
	t.Logf("interrupted after row %s with %d CDRs stored", stopped[1], mid)

	// Second run: the same command continues job 1 at once.
	cmd, stdout, stderr = importCmd()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if code := wait(cmd, 120*time.Second); code != 0 {
		t.Fatalf("resumed run: exit %d, stderr %q", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "resuming import job 1 after row "+stopped[1]) {
		t.Errorf("resumed run does not say it resumes job 1 after row %s: %q", stopped[1], stderr.String())
	}
	want := fmt.Sprintf("job 1 done: %d rows, %d created, 0 duplicates, %d failed (0 conflicts)\n", total, total-refused, refused)
	if stdout.String() != want {
		t.Fatalf("resumed run printed %q, want %q", stdout.String(), want)
	}
	if !strings.Contains(stderr.String(), `row 1000 (cli-999): direction is required`) {
		t.Errorf("refused rows are not listed with their line and reason: %q", stderr.String()[:min(500, len(stderr.String()))])
	}
	if rows, distinct := importedCDRs(t, dir, "acme"); rows != total-refused || distinct != rows {
		t.Fatalf("after the resumed run %d CDRs (%d distinct), want %d", rows, distinct, total-refused)
	}

	// Third run over the complete import: a new job, all duplicates.
	cmd, stdout, stderr = importCmd()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if code := wait(cmd, 120*time.Second); code != 0 {
		t.Fatalf("repeated run: exit %d, stderr %q", code, stderr.String())
	}
	want = fmt.Sprintf("job 2 done: %d rows, 0 created, %d duplicates, %d failed (0 conflicts)\n", total, total-refused, refused)
	if stdout.String() != want {
		t.Fatalf("repeated run printed %q, want %q", stdout.String(), want)
	}
	if rows, _ := importedCDRs(t, dir, "acme"); rows != total-refused {
		t.Fatalf("after the repeated run %d CDRs, want %d", rows, total-refused)
	}

	// An unknown tenant is a command-line mistake.
	if r := runCLI(t, dir, "", "import", "cdrs", file, "--tenant", "nosuch"); r.code != 2 || !strings.Contains(r.stderr, "no such tenant") {
		t.Errorf("unknown tenant: exit %d, %q", r.code, r.stderr)
	}
}

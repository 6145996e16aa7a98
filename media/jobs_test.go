package media_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/media"
	"github.com/switchboard/switchboard/models"
	"github.com/switchboard/switchboard/models/storetest"
)

// writeCDRFile writes n JSON Lines CDRs (every 1000th malformed on
// purpose) or the same as CSV.
func writeCDRFile(t testing.TB, format string, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cdrs."+format)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	if format == media.FormatCSV {
		fmt.Fprintln(w, "external_id,start,duration,billsec,src,dst,direction,disposition,caller_id_name")
	}
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		start := base.Add(time.Duration(i) * time.Second).Format(time.RFC3339)
		dir := "outbound"
		if i%1000 == 999 {
			dir = "sideways" // refused row, reported with its number
		}
		if format == media.FormatCSV {
			fmt.Fprintf(w, "old-%d,%s,%d,%d,1001,+2721555%04d,%s,answered,\"Eve, Smith\"\n", i, start, 60, 30, i%10000, dir)
		} else {
			fmt.Fprintf(w, `{"external_id":"old-%d","start":"%s","duration":60,"billsec":30,"src":"1001","dst":"+2721555%04d","direction":"%s","disposition":"answered"}`+"\n", i, start, i%10000, dir)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

func newTenant(t testing.TB, st *models.Store) models.Owner {
	t.Helper()
	name := storetest.Name("imp")
	if _, err := st.Create(context.Background(), st.Registry().Resource("tenants"), models.Owner{}, map[string]any{"tenant": name, "callerid": "+27110000000"}); err != nil {
		t.Fatal(err)
	}
	o, err := st.Tenant(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func importedCount(t testing.TB, st *models.Store, tenant string) int {
	t.Helper()
	var n int
	if err := st.DB().Get(&n, "SELECT COUNT(*) FROM cdrs WHERE tenant = ? AND node = ?", tenant, media.ImportNode); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestCDRImport100kResumesAfterKillWithoutDuplicates: a 100,000-row JSON
// Lines import is stopped mid-way (its runner killed: context cancelled,
// lease left behind), another runner resumes it once the lease lapses, and
// the table holds each record once; refused rows are listed with their row
// numbers; heap growth during the run stays small (streamed, batched).
func TestCDRImport100kResumesAfterKillWithoutDuplicates(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		o := newTenant(t, st)
		src := writeCDRFile(t, media.FormatJSONL, 100_000)
		clock := time.Now()
		svc := &media.Service{Store: st, Lib: &media.Library{Root: t.TempDir()}, Now: func() time.Time { return clock }}
		job, err := svc.CreateCDRJob(ctx, o, media.FormatJSONL, src)
		if err != nil {
			t.Fatal(err)
		}

		// First runner: killed once 30,000 rows are committed (whatever
		// the batch size, a multiple of 1000).
		killCtx, kill := context.WithCancel(ctx)
		err = svc.RunJob(killCtx, job.ID, "runner-1", func(j media.Job) {
			if j.RowsDone >= 30_000 {
				kill()
			}
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("killed run: %v", err)
		}
		mid, _ := svc.JobByID(ctx, o, job.ID)
		if mid.Status != media.JobRunning || mid.RowsDone != 30_000 || importedCount(t, st, o.Tenant) != 30_000-30 {
			t.Fatalf("after the kill: %+v, %d stored", mid, importedCount(t, st, o.Tenant))
		}
		// Another runner cannot take it while the dead one's lease holds.
		if err := svc.RunJob(ctx, job.ID, "runner-2", nil); !errors.Is(err, media.ErrLeased) {
			t.Fatalf("run under a live lease: %v", err)
		}

		// The lease lapses; a restarted server resumes it. Memory is
		// measured over the resumed 70,000 rows.
		clock = clock.Add(2 * time.Minute)
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		svc.ResumeJobs(ctx, "runner-2")
		runtime.ReadMemStats(&after)
		done, err := svc.JobByID(ctx, o, job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if done.Status != media.JobDone || done.RowsDone != 100_000 || done.Created != 99_900 || done.Failed != 100 || done.Duplicates != 0 {
			t.Fatalf("finished job %+v", done)
		}
		if n := importedCount(t, st, o.Tenant); n != 99_900 {
			t.Fatalf("%d rows stored, want 99900 (no duplicates)", n)
		}
		if len(done.Errors) != 100 || done.Errors[0].Row != 1000 || done.Errors[0].ExternalID != "old-999" || done.Errors[0].Code != "invalid_direction" {
			t.Fatalf("errors %d, first %+v", len(done.Errors), done.Errors[0])
		}
		heapGrowth := int64(after.HeapInuse) - int64(before.HeapInuse)
		t.Logf("resumed 70,000 rows: heap in use %+d KiB, total allocated %d MiB", heapGrowth/1024, (after.TotalAlloc-before.TotalAlloc)>>20)
		if heapGrowth > 32<<20 {
			t.Fatalf("heap grew by %d MiB over the import", heapGrowth>>20)
		}

		// Importing the same records again: all duplicates, nothing new.
		again, err := svc.CreateCDRJob(ctx, o, media.FormatJSONL, writeCDRFile(t, media.FormatJSONL, 2000))
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.RunJob(ctx, again.ID, "runner-3", nil); err != nil {
			t.Fatal(err)
		}
		again, _ = svc.JobByID(ctx, o, again.ID)
		if again.Created != 0 || again.Duplicates != 1998 || again.Failed != 2 || importedCount(t, st, o.Tenant) != 99_900 {
			t.Fatalf("second import %+v", again)
		}
	})
}

// TestCDRImportCSV: a CSV with a header, quoted fields and bad rows.
func TestCDRImportCSV(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		o := newTenant(t, st)
		src := writeCDRFile(t, media.FormatCSV, 2500)
		svc := &media.Service{Store: st, Lib: &media.Library{Root: t.TempDir()}}
		job, err := svc.CreateCDRJob(ctx, o, media.FormatCSV, src)
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.RunJob(ctx, job.ID, "r", nil); err != nil {
			t.Fatal(err)
		}
		job, _ = svc.JobByID(ctx, o, job.ID)
		if job.Status != media.JobDone || job.Created != 2498 || job.Failed != 2 || job.RowsDone != 2500 {
			t.Fatalf("csv job %+v", job)
		}
		var name string
		if err := st.DB().Get(&name, "SELECT caller_id_name FROM cdrs WHERE tenant = ? AND channel_id = 'old-5'", o.Tenant); err != nil || name != "Eve, Smith" {
			t.Fatalf("caller name %q %v", name, err)
		}
	})
}

// TestCDRImportEndEmitsSystemEvent: a finished job records import.completed
// with its counts, a job over a broken file import.failed with the reason,
// each once, in the outbox (system webhooks get them from there).
func TestCDRImportEndEmitsSystemEvent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		o := newTenant(t, st)
		svc := &media.Service{Store: st, Lib: &media.Library{Root: t.TempDir()}}
		good, err := svc.CreateCDRJob(ctx, o, media.FormatJSONL, writeCDRFile(t, media.FormatJSONL, 1000))
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.RunJob(ctx, good.ID, "r", nil); err != nil {
			t.Fatal(err)
		}
		bad := filepath.Join(t.TempDir(), "bad.csv")
		if err := os.WriteFile(bad, []byte("external_id,colour\nx,red\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		failed, err := svc.CreateCDRJob(ctx, o, media.FormatCSV, bad)
		if err != nil {
			t.Fatal(err)
		}
		if err := svc.RunJob(ctx, failed.ID, "r", nil); err == nil {
			t.Fatal("a CSV with an unknown column ran")
		}
		all, err := st.OutboxAfter(ctx, 0, 1_000_000)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string][]map[string]any{}
		for _, c := range all {
			var d map[string]any
			_ = json.Unmarshal(c.After, &d)
			if d["tenant"] == o.Tenant && (c.Resource == "import.completed" || c.Resource == "import.failed") {
				seen[c.Resource] = append(seen[c.Resource], d)
			}
		}
		if c := seen["import.completed"]; len(c) != 1 || c[0]["job_id"] != float64(good.ID) || c[0]["created"] != float64(999) || c[0]["failed"] != float64(1) || c[0]["status"] != media.JobDone {
			t.Errorf("import.completed events %v", c)
		}
		if f := seen["import.failed"]; len(f) != 1 || f[0]["job_id"] != float64(failed.ID) || !strings.Contains(f[0]["error"].(string), "colour") {
			t.Errorf("import.failed events %v", f)
		}
	})
}

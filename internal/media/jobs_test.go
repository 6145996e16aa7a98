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

	"github.com/switchboard/switchboard/internal/media"
	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
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
	if err := st.Querier().GetContext(context.Background(), &n, "SELECT COUNT(*) FROM cdrs WHERE tenant = ? AND node = ?", tenant, media.ImportNode); err != nil {
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
		job, err := svc.CreateCDRJob(ctx, o, media.FormatJSONL, src, "")
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
		again, err := svc.CreateCDRJob(ctx, o, media.FormatJSONL, writeCDRFile(t, media.FormatJSONL, 2000), "")
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
		job, err := svc.CreateCDRJob(ctx, o, media.FormatCSV, src, "")
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
		if err := st.Querier().GetContext(context.Background(), &name, "SELECT caller_id_name FROM cdrs WHERE tenant = ? AND channel_id = 'old-5'", o.Tenant); err != nil || name != "Eve, Smith" {
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
		good, err := svc.CreateCDRJob(ctx, o, media.FormatJSONL, writeCDRFile(t, media.FormatJSONL, 1000), "")
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
		failed, err := svc.CreateCDRJob(ctx, o, media.FormatCSV, bad, "")
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

// TestCDRImportConflictIsARowErrorNotADuplicate: a bulk file repeating
// external_ids already imported counts the rows with the same content as
// duplicates and refuses the rows with other content as conflicts (code
// conflict, the message naming each field that differs), apart from the
// duplicates; the stored CDRs keep their first content. The synchronous
// import sorts the same way.
func TestCDRImportConflictIsARowErrorNotADuplicate(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		o := newTenant(t, st)
		svc := &media.Service{Store: st, Lib: &media.Library{Root: t.TempDir()}}
		line := func(id, start string, duration int, dst, disposition, extra string) string {
			return fmt.Sprintf(`{"external_id":%q,"start":%q,"duration":%d,"src":"1001","dst":%q,"direction":"outbound","disposition":%q%s}`,
				id, start, duration, dst, disposition, extra)
		}
		run := func(lines ...string) media.Job {
			t.Helper()
			path := filepath.Join(t.TempDir(), "cdrs.jsonl")
			if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			job, err := svc.CreateCDRJob(ctx, o, media.FormatJSONL, path, "")
			if err != nil {
				t.Fatal(err)
			}
			if err := svc.RunJob(ctx, job.ID, "r", nil); err != nil {
				t.Fatal(err)
			}
			job, err = svc.JobByID(ctx, o, job.ID)
			if err != nil {
				t.Fatal(err)
			}
			return job
		}
		const t0 = "2025-03-01T10:00:00Z"
		first := run(
			line("a", t0, 60, "+27215550100", "answered", `,"answer":"2025-03-01T10:00:05Z"`),
			line("b", t0, 30, "+27215550101", "answered", ""),
			line("c", t0, 0, "+27215550102", "busy", ""),
			line("d", t0, 10, "+27215550103", "answered", `,"caller_id_name":"Eve"`),
		)
		if first.Created != 4 || first.Duplicates != 0 || first.Conflicts != 0 || first.Failed != 0 {
			t.Fatalf("first import %+v", first)
		}

		again := run(
			line("a", t0, 60, "+27215550100", "answered", `,"answer":"2025-03-01T10:00:05Z"`), // 1: same content
			line("b", t0, 45, "+27215550101", "answered", ""),                                 // 2: other duration (and so end)
			line("c", t0, 0, "+27215550199", "no_answer", ""),                                 // 3: other dst and disposition
			line("d", t0, 10, "+27215550103", "answered", `,"caller_id_name":"Eve"`),          // 4: same content
			line("e", t0, 5, "+27215550104", "answered", ""),                                  // 5: new
			line("e", t0, 6, "+27215550104", "answered", ""),                                  // 6: same id again in the file, other duration
			line("a", t0, 60, "+27215550100", "answered", ""),                                 // 7: answer dropped
		)
		if again.Status != media.JobDone || again.RowsDone != 7 || again.Created != 1 || again.Duplicates != 2 || again.Conflicts != 4 || again.Failed != 4 {
			t.Fatalf("second import: created %d, duplicates %d, conflicts %d, failed %d (%+v); want 1, 2, 4, 4",
				again.Created, again.Duplicates, again.Conflicts, again.Failed, again)
		}
		want := map[int64]struct {
			id     string
			fields string
		}{2: {"b", "end, duration"}, 3: {"c", "dst, disposition"}, 6: {"e", "end, duration"}, 7: {"a", "answer"}}
		if len(again.Errors) != len(want) {
			t.Fatalf("errors %+v", again.Errors)
		}
		for _, e := range again.Errors {
			w, ok := want[e.Row]
			if !ok || e.Code != "conflict" || e.ExternalID != w.id || !strings.HasSuffix(e.Error, "a different "+w.fields) {
				t.Errorf("row %d: %+v; want external_id %s, code conflict, naming %q", e.Row, e, w.id, w.fields)
			}
		}
		// The stored CDRs are the first import's.
		var dur int64
		var dst, cause string
		if err := st.Querier().GetContext(context.Background(), &dur, st.Querier().Rebind("SELECT duration_seconds FROM cdrs WHERE tenant = ? AND channel_id = 'b'"), o.Tenant); err != nil || dur != 30 {
			t.Errorf("b's duration %d %v, want 30 (unchanged)", dur, err)
		}
		if err := st.Querier().QueryRowContext(context.Background(), st.Querier().Rebind("SELECT destination, hangup_cause FROM cdrs WHERE tenant = ? AND channel_id = 'c'"), o.Tenant).Scan(&dst, &cause); err != nil || dst != "+27215550102" || cause != "USER_BUSY" {
			t.Errorf("c stored as %s %s %v, want unchanged", dst, cause, err)
		}
		if n := importedCount(t, st, o.Tenant); n != 5 {
			t.Errorf("%d CDRs stored, want 5", n)
		}

		// The synchronous import: the same sorting, conflicts in failed.
		dur0, dur30, dur99 := int64(0), int64(30), int64(99)
		sum, err := svc.ImportCDRs(ctx, o, []media.CDRRecord{
			{ExternalID: "b", Start: t0, Duration: &dur30, Src: "1001", Dst: "+27215550101", Direction: "outbound", Disposition: "answered"},
			{ExternalID: "b", Start: t0, Duration: &dur30, Src: "1001", Dst: "+27215550101", Direction: "inbound", Disposition: "answered"},
			{ExternalID: "f", Start: t0, Duration: &dur99, Src: "1001", Dst: "+27215550105", Direction: "outbound", Disposition: "answered", HangupCause: "NORMAL_CLEARING"},
			{ExternalID: "c", Start: t0, Duration: &dur0, Src: "1001", Dst: "+27215550102", Direction: "outbound", Disposition: "busy", HangupCause: "CALL_REJECTED"},
		})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Created != 1 || sum.Duplicates != 1 || sum.Conflicts != 2 || len(sum.Failed) != 2 ||
			sum.Failed[0].Row != 1 || sum.Failed[0].Code != "conflict" || !strings.HasSuffix(sum.Failed[0].Error, "a different direction") ||
			sum.Failed[1].Row != 3 || sum.Failed[1].Code != "conflict" || !strings.HasSuffix(sum.Failed[1].Error, "a different hangup_cause") {
			t.Fatalf("synchronous import %+v", sum)
		}
	})
}

// A job created by a runner is that runner's from the start: another
// replica's resume round, which runs every unfinished job whose lease has
// lapsed, does not take it in the moment before its creator runs it (seen
// in CI: a replica that took an upload's job while shutting down kept it
// for a lease's length, and the upload stayed at row 0). A job created
// with no runner is any replica's.
func TestNewJobBelongsToItsRunner(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		o := newTenant(t, st)
		svc := &media.Service{Store: st, Lib: &media.Library{Root: t.TempDir()}}
		mine, err := svc.CreateCDRJob(ctx, o, media.FormatCSV, writeCDRFile(t, media.FormatCSV, 10), "replica-a")
		if err != nil {
			t.Fatal(err)
		}
		anyones, err := svc.CreateCDRJob(ctx, o, media.FormatCSV, writeCDRFile(t, media.FormatCSV, 10), "")
		if err != nil {
			t.Fatal(err)
		}
		svc.ResumeJobs(ctx, "replica-b")
		if j, _ := svc.JobByID(ctx, o, mine.ID); j.Status != media.JobRunning || j.RowsDone != 0 {
			t.Fatalf("another replica ran replica-a's new job: %+v", j)
		}
		if j, _ := svc.JobByID(ctx, o, anyones.ID); j.Status != media.JobDone {
			t.Fatalf("a job with no runner was not resumed: %+v", j)
		}
		if err := svc.RunJob(ctx, mine.ID, "replica-a", nil); err != nil {
			t.Fatal(err)
		}
		if j, _ := svc.JobByID(ctx, o, mine.ID); j.Status != media.JobDone || j.RowsDone != 10 {
			t.Fatalf("replica-a's job after its run: %+v", j)
		}
	})
}

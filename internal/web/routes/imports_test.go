package routes_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard/switchboard/internal/app/apptest"
)

func cdr(id, dst string) map[string]any {
	return map[string]any{"external_id": id, "start": "2026-02-01T10:00:00Z", "duration": 65, "billsec": 50,
		"src": "1001", "dst": dst, "direction": "outbound", "disposition": "answered"}
}

// TestCDRImportJSONIsIdempotent: records are accepted or refused one by
// one; a repeat counts as a duplicate and stores nothing; the imported
// CDRs appear in the CDR report.
func TestCDRImportJSONIsIdempotent(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "cdri")
		path := "/api/tenants/" + tenant + "/imports/cdrs"
		bad := cdr("c-3", "+27215550103")
		bad["billsec"] = 99
		body := map[string]any{"records": []any{cdr("c-1", "+27215550101"), cdr("c-2", "+27215550102"), bad}}
		sum := s.Do(t, "POST", path, s.Key, body).Expect(t, 200).Map(t)
		failed := sum["failed"].([]any)
		if sum["created"].(float64) != 2 || sum["duplicates"].(float64) != 0 || len(failed) != 1 ||
			failed[0].(map[string]any)["row"].(float64) != 2 || failed[0].(map[string]any)["code"] != "invalid_billsec" {
			t.Fatalf("first import %v", sum)
		}
		sum = s.Do(t, "POST", path, s.Key, body).Expect(t, 200).Map(t)
		if sum["created"].(float64) != 0 || sum["duplicates"].(float64) != 2 {
			t.Fatalf("repeat %v", sum)
		}
		var cdrs []map[string]any
		s.Do(t, "GET", "/api/reports/cdrs?tenant="+tenant, s.Key, nil).Expect(t, 200).ExpectHeader(t, "X-Total-Count", "2").JSON(t, &cdrs)
		if cdrs[0]["destination"] == "" || cdrs[0]["duration_seconds"].(float64) != 65 || cdrs[0]["node"] != "import" || cdrs[0]["imported"] != true {
			t.Fatalf("report %v", cdrs)
		}
		s.Do(t, "POST", path, s.Key, map[string]any{"records": []any{}}).Expect(t, 400)
	})
}

// TestCDRImportFileRunsAsJob: a CSV body answers 202 with a job; the job
// resource shows progress to done and the refused rows.
func TestCDRImportFileRunsAsJob(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "cdrf")
		var csv strings.Builder
		csv.WriteString("external_id,start,duration,src,dst,direction,disposition\n")
		for i := range 3000 {
			dir := "inbound"
			if i == 1500 {
				dir = "up"
			}
			fmt.Fprintf(&csv, "f-%d,2026-02-01T10:%02d:00Z,30,+2782555%04d,1001,%s,answered\n", i, i%60, i, dir)
		}
		r := s.DoHeaders(t, "POST", "/api/tenants/"+tenant+"/imports/cdrs", map[string]string{"X-API-Key": s.Key, "Content-Type": "text/csv"}, csv.String()).Expect(t, 202)
		job := r.Map(t)
		loc := strings.TrimPrefix(r.Header.Get("Location"), s.Cfg.BaseURL)
		if loc != fmt.Sprintf("/api/tenants/%s/imports/%v", tenant, job["id"]) {
			t.Fatalf("Location %q for %v", loc, job)
		}
		deadline := time.Now().Add(30 * time.Second)
		for job["status"] == "running" && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			job = s.Do(t, "GET", loc, s.Key, nil).Expect(t, 200).Map(t)
		}
		errs := job["errors"].([]any)
		if job["status"] != "done" || job["rows_done"].(float64) != 3000 || job["created"].(float64) != 2999 || job["failed"].(float64) != 1 ||
			len(errs) != 1 || errs[0].(map[string]any)["row"].(float64) != 1501 || errs[0].(map[string]any)["external_id"] != "f-1500" {
			t.Fatalf("job %v", job)
		}
		s.Do(t, "GET", "/api/reports/cdrs?tenant="+tenant+"&limit=1", s.Key, nil).Expect(t, 200).ExpectHeader(t, "X-Total-Count", "2999")
		// Jobs are tenant-scoped.
		other := s.KeyFor(t, map[string]any{"tenant": s.Tenant(t, "cdrf2")})
		s.Do(t, "GET", loc, other, nil).Expect(t, 403)
		// A form-encoded body is not an import format.
		s.DoHeaders(t, "POST", "/api/tenants/"+tenant+"/imports/cdrs", map[string]string{"X-API-Key": s.Key, "Content-Type": "text/plain"}, "x").Expect(t, 415)
	})
}

// waitJob polls an import job until it is no longer running.
func waitJob(t *testing.T, s *apptest.Server, loc string) map[string]any {
	t.Helper()
	job := s.Do(t, "GET", loc, s.Key, nil).Expect(t, 200).Map(t)
	deadline := time.Now().Add(30 * time.Second)
	for job["status"] == "running" {
		if time.Now().After(deadline) {
			t.Fatalf("job still running: %v", job)
		}
		time.Sleep(50 * time.Millisecond)
		job = s.Do(t, "GET", loc, s.Key, nil).Expect(t, 200).Map(t)
	}
	return job
}

// postCDRFile posts a CSV import and answers the job's path.
func postCDRFile(t *testing.T, s *apptest.Server, tenant, csv string) string {
	t.Helper()
	r := s.DoHeaders(t, "POST", "/api/tenants/"+tenant+"/imports/cdrs", map[string]string{"X-API-Key": s.Key, "Content-Type": "text/csv"}, csv).Expect(t, 202)
	return strings.TrimPrefix(r.Header.Get("Location"), s.Cfg.BaseURL)
}

// TestCDRImportConflictNamesTheFields: the same external_id with other
// content is not a duplicate: the synchronous import refuses it as a row
// with code conflict naming the fields that differ (and counts it in
// conflicts), a file job lists it among its refused rows the same way; the
// stored CDR keeps its first content.
func TestCDRImportConflictNamesTheFields(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "cdrc")
		path := "/api/tenants/" + tenant + "/imports/cdrs"
		s.Do(t, "POST", path, s.Key, map[string]any{"records": []any{cdr("k-1", "+27215550101"), cdr("k-2", "+27215550102")}}).Expect(t, 200)

		changed := cdr("k-1", "+27215550199")
		changed["billsec"] = 10
		sum := s.Do(t, "POST", path, s.Key, map[string]any{"records": []any{changed, cdr("k-2", "+27215550102")}}).Expect(t, 200).Map(t)
		failed, _ := sum["failed"].([]any)
		if sum["created"] != 0.0 || sum["duplicates"] != 1.0 || sum["conflicts"] != 1.0 || len(failed) != 1 {
			t.Fatalf("repeat with other content: %v", sum)
		}
		f := failed[0].(map[string]any)
		if f["row"] != 0.0 || f["external_id"] != "k-1" || f["code"] != "conflict" || f["error"] != `external_id "k-1" was imported before with a different billsec, dst` {
			t.Fatalf("conflict row %v", f)
		}

		// A file: one repeat, one conflict (other direction), one new row.
		csv := "external_id,start,duration,billsec,src,dst,direction,disposition\n" +
			"k-2,2026-02-01T10:00:00Z,65,50,1001,+27215550102,outbound,answered\n" +
			"k-1,2026-02-01T10:00:00Z,65,50,1001,+27215550101,inbound,answered\n" +
			"k-3,2026-02-01T10:00:00Z,65,50,1001,+27215550103,outbound,answered\n"
		job := waitJob(t, s, postCDRFile(t, s, tenant, csv))
		errs, _ := job["errors"].([]any)
		if job["status"] != "done" || job["created"] != 1.0 || job["duplicates"] != 1.0 || job["conflicts"] != 1.0 || job["failed"] != 1.0 || len(errs) != 1 {
			t.Fatalf("file job %v", job)
		}
		if e := errs[0].(map[string]any); e["row"] != 2.0 || e["code"] != "conflict" || e["external_id"] != "k-1" || !strings.HasSuffix(e["error"].(string), "a different direction") {
			t.Fatalf("job's conflict row %v", e)
		}

		var cdrs []map[string]any
		s.Do(t, "GET", "/api/reports/cdrs?tenant="+tenant, s.Key, nil).Expect(t, 200).ExpectHeader(t, "X-Total-Count", "3").JSON(t, &cdrs)
		for _, c := range cdrs {
			if c["channel_id"] == "k-1" && (c["destination"] != "+27215550101" || c["billsec"] != 50.0 || c["direction"] != "outbound") {
				t.Fatalf("k-1 changed by a conflicting import: %v", c)
			}
		}
	})
}

// TestCDRImportConcurrentRepeatsStoreOnce: the same records sent by several
// clients at once, as JSON and as files, are stored once: every request
// succeeds, the created counts add up to the records, the rest are
// duplicates (never conflicts) and the report holds each CDR once.
func TestCDRImportConcurrentRepeatsStoreOnce(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "cdrp")
		path := "/api/tenants/" + tenant + "/imports/cdrs"
		const clients, n = 6, 40
		records := make([]any, n)
		for i := range records {
			records[i] = cdr(fmt.Sprintf("p-%d", i), fmt.Sprintf("+2721555%04d", i))
		}
		answers := make([]*apptest.Response, clients)
		var wg sync.WaitGroup
		for i := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers[i] = s.Do(t, "POST", path, s.Key, map[string]any{"records": records})
			}()
		}
		wg.Wait()
		created := 0.0
		for _, a := range answers {
			sum := a.Expect(t, 200).Map(t)
			if sum["created"].(float64)+sum["duplicates"].(float64) != n || sum["conflicts"] != 0.0 || len(sum["failed"].([]any)) != 0 {
				t.Fatalf("concurrent JSON import answered %v", sum)
			}
			created += sum["created"].(float64)
		}
		if created != n {
			t.Fatalf("concurrent JSON imports created %v CDRs in all, want %d", created, n)
		}
		s.Do(t, "GET", "/api/reports/cdrs?tenant="+tenant+"&limit=1", s.Key, nil).Expect(t, 200).ExpectHeader(t, "X-Total-Count", fmt.Sprint(n))

		// The same file uploaded by several clients at once: one job each,
		// all done, each row stored once.
		var csv strings.Builder
		csv.WriteString("external_id,start,duration,billsec,src,dst,direction,disposition\n")
		for i := range 3000 {
			fmt.Fprintf(&csv, "q-%d,2026-02-01T10:00:00Z,65,50,1001,+2721556%04d,outbound,answered\n", i, i)
		}
		locs := make([]string, clients)
		for i := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				locs[i] = postCDRFile(t, s, tenant, csv.String())
			}()
		}
		wg.Wait()
		created = 0
		for _, loc := range locs {
			job := waitJob(t, s, loc)
			if job["status"] != "done" || job["created"].(float64)+job["duplicates"].(float64) != 3000 || job["conflicts"] != 0.0 || job["failed"] != 0.0 {
				t.Fatalf("concurrent file job %v", job)
			}
			created += job["created"].(float64)
		}
		if created != 3000 {
			t.Fatalf("concurrent file jobs created %v CDRs in all, want 3000", created)
		}
		s.Do(t, "GET", "/api/reports/cdrs?tenant="+tenant+"&limit=1", s.Key, nil).Expect(t, 200).ExpectHeader(t, "X-Total-Count", fmt.Sprint(n+3000))
	})
}

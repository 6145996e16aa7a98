package routes_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/switchboard/switchboard/app/apptest"
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

package routes_test

import (
	"testing"

	"github.com/switchboard/switchboard/internal/app/apptest"
)

// TestCDRReportFilters: the CDR report narrows by direction, extension
// and number (the caller's or the dialled one), as its page offers.
func TestCDRReportFilters(t *testing.T) {
	apptest.Each(t, nil, func(t *testing.T, s *apptest.Server) {
		tenant := s.Tenant(t, "cdrq")
		in := cdr("q-1", "+27215550101")
		in["extension"] = "1001"
		out := cdr("q-2", "1002")
		out["src"], out["direction"] = "+27825550001", "inbound"
		s.Do(t, "POST", "/api/tenants/"+tenant+"/imports/cdrs", s.Key, map[string]any{"records": []any{in, out, cdr("q-3", "+27215550103")}}).Expect(t, 200)
		ids := func(q string) []string {
			var list []map[string]any
			s.Do(t, "GET", "/api/reports/cdrs?tenant="+tenant+q, s.Key, nil).Expect(t, 200).JSON(t, &list)
			var out []string
			for _, c := range list {
				out = append(out, c["channel_id"].(string))
			}
			return out
		}
		for q, want := range map[string][]string{
			"&direction=inbound":     {"q-2"},
			"&extension=1001":        {"q-1"},
			"&number=%2B27825550001": {"q-2"},
			"&number=%2B27215550103": {"q-3"},
			"&direction=outbound":    {"q-1", "q-3"},
		} {
			got := ids(q)
			if len(got) != len(want) {
				t.Errorf("%s: %v, want %v", q, got, want)
				continue
			}
			for _, w := range want {
				found := false
				for _, g := range got {
					found = found || g == w
				}
				if !found {
					t.Errorf("%s: %v, want %v", q, got, want)
				}
			}
		}
	})
}

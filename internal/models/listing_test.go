package models_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

// indexLeads lists, per index of table, its columns in order (unique and
// not, primary key excluded).
func indexLeads(t *testing.T, st *models.Store, table string) [][]string {
	t.Helper()
	ctx := context.Background()
	db := st.Querier()
	var out [][]string
	if st.Dialect().SQLite {
		var names []string
		if err := db.SelectContext(ctx, &names, "SELECT name FROM pragma_index_list(?)", table); err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			var cols []string
			if err := db.SelectContext(ctx, &cols, "SELECT name FROM pragma_index_info(?) ORDER BY seqno", n); err != nil {
				t.Fatal(err)
			}
			out = append(out, cols)
		}
		return out
	}
	var rows []struct {
		Name   string `db:"INDEX_NAME"`
		Column string `db:"COLUMN_NAME"`
	}
	if err := db.SelectContext(ctx, &rows, "SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY INDEX_NAME, SEQ_IN_INDEX", table); err != nil {
		t.Fatal(err)
	}
	byName := map[string]int{}
	for _, r := range rows {
		i, ok := byName[r.Name]
		if !ok {
			i = len(out)
			byName[r.Name] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], r.Column)
	}
	return out
}

// TestListingColumnsAreIndexed: every column a list filters or sorts by
// (the Listing declarations) leads an index after tenant_id, on both
// dialects, so a filtered or sorted page of one tenant reads an index.
func TestListingColumnsAreIndexed(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		n := 0
		for _, res := range models.Resources {
			if res.Listing == nil {
				continue
			}
			idx := indexLeads(t, st, res.Table)
			for _, col := range res.Listing.IndexedColumns(res) {
				n++
				found := false
				for _, cols := range idx {
					if len(cols) >= 2 && cols[0] == "tenant_id" && cols[1] == col {
						found = true
					}
				}
				if !found {
					t.Errorf("%s: no index on (tenant_id, %s); indexes %v", res.Table, col, idx)
				}
			}
		}
		if n < 40 {
			t.Fatalf("only %d listed columns checked: are the CRM listings declared?", n)
		}
	})
}

// TestListQueryRefusesBadInput: unknown parameters, sorts and values are
// 400s naming the parameter, never a silent full list.
func TestListQueryRefusesBadInput(t *testing.T) {
	reg, err := models.NewRegistry(models.Resources)
	if err != nil {
		t.Fatal(err)
	}
	contacts, leads := reg.Resource("contacts"), reg.Resource("leads")
	for _, tc := range []struct {
		res   *models.Resource
		query string
		field string
	}{
		{contacts, "colour=red", "colour"},
		{contacts, "sort=phones", "sort"},
		{contacts, "sort=--last_name", "sort"},
		{contacts, "owner=abc", "owner"},
		{contacts, "owner=1000&owner=1001", "owner"},
		{contacts, "account_id=0", "account_id"},
		{contacts, "updated_since=yesterday", "updated_since"},
		{contacts, "q=" + strings.Repeat("x", 101), "q"},
		{contacts, "tags=" + url.QueryEscape(`a"b`), "tags"},
		{leads, "status=hot", "status"},
		{leads, "score=high", "unknown"}, // score sorts, it does not filter
	} {
		q, _ := url.ParseQuery(tc.query)
		_, err := models.ParseListQuery(tc.res, q)
		var verr *models.ValidationError
		if !asValidation(err, &verr) {
			t.Errorf("%s?%s: %v, want a validation error", tc.res.Name, tc.query, err)
			continue
		}
		field := tc.field
		if field == "unknown" {
			field = "score"
		}
		if verr.Fields[field] == "" {
			t.Errorf("%s?%s: fields %v do not name %s", tc.res.Name, tc.query, verr.Fields, field)
		}
	}
	q, _ := url.ParseQuery("q=smi&sort=-last_name&owner=1000&tags=vip&updated_since=2026-01-02T03:04:05Z&limit=5&offset=0")
	lq, err := models.ParseListQuery(contacts, q)
	if err != nil || lq.Search != "smi" || lq.Sort != "last_name" || !lq.Desc || len(lq.Filters) != 2 || lq.UpdatedSince == "" {
		t.Fatalf("good query: %+v, %v", lq, err)
	}
}

func asValidation(err error, target **models.ValidationError) bool {
	v, ok := err.(*models.ValidationError)
	if ok {
		*target = v
	}
	return ok
}

package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/switchboard/switchboard/internal/models"
)

const (
	benchSecret = "Bench-secret-0001"
	benchTrunk  = "bench_trunk"
)

// The seeded size (sbbench xml -tenants, -users).
var (
	tenantCount   = 1000
	extsPerTenant = 50
	didTenants    = 100 // tenants that get a DID, inbound and outbound routes
)

// setSize sets the seeded size: users spread evenly over tenants. Names
// keep their fixed widths (the cold modes' templates rely on them):
// at most 10,000 tenants of at most 9,000 extensions.
func setSize(tenants, users int) error {
	if tenants < 1 || tenants > 10000 || users < tenants || users/tenants > 9000 || users%tenants != 0 {
		return fmt.Errorf("-tenants %d -users %d: want 1 to 10,000 tenants and a multiple of them as users, at most 9,000 per tenant", tenants, users)
	}
	tenantCount, extsPerTenant, didTenants = tenants, users/tenants, min(100, tenants)
	return nil
}

// asAPIInput gives a Go literal the shape an API body decodes to.
func asAPIInput(in map[string]any) (map[string]any, error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out map[string]any
	return out, dec.Decode(&out)
}

func hexKey(s string) ([]byte, error) { return hex.DecodeString(s) }

func tenantName(i int) string { return fmt.Sprintf("bench_t%04d", i) }
func extName(j int) string    { return fmt.Sprint(1000 + j) }
func didNumber(i int) string  { return fmt.Sprintf("+2721%07d", i) }

// seed creates one template tenant through the store (so hooks, defaults
// and encryption apply) and copies its rows in bulk with multi-row
// INSERTs: 1,000 tenants, 50,000 extensions, and for the first 100 tenants
// a DID, an inbound route and an outbound route over one shared trunk. A
// database already seeded is reused. Copied extensions do not claim their
// numbers in the number plan: nothing here reads it.
func seed(ctx context.Context, st *models.Store) error {
	var n int
	if err := st.Querier().GetContext(ctx, &n, "SELECT COUNT(*) FROM tenants WHERE tenant LIKE 'bench_t%'"); err != nil {
		return fmt.Errorf("check seed: %w", err)
	}
	if n > 0 {
		var exts int
		if err := st.Querier().GetContext(ctx, &exts, "SELECT COUNT(*) FROM extensions WHERE tenant_id = (SELECT id FROM tenants WHERE tenant = ?)", tenantName(0)); err != nil {
			return fmt.Errorf("check seed: %w", err)
		}
		if n != tenantCount || exts != extsPerTenant {
			return fmt.Errorf("the database holds a seed of %d tenants of %d users; drop it or ask for that size", n, exts)
		}
		return nil
	}
	reg := st.Registry()
	create := func(res string, o models.Owner, in map[string]any) (models.Record, error) {
		in, err := asAPIInput(in)
		if err != nil {
			return nil, err
		}
		rec, err := st.Create(ctx, reg.Resource(res), o, in)
		if err != nil {
			return nil, fmt.Errorf("seed %s: %w", res, err)
		}
		return rec, nil
	}
	if _, err := create("sip_trunks", models.Owner{}, map[string]any{"name": benchTrunk, "host": "carrier.example"}); err != nil {
		return err
	}
	if _, err := create("tenants", models.Owner{}, map[string]any{"tenant": tenantName(0), "callerid": "+27110000000"}); err != nil {
		return err
	}
	o, err := st.Tenant(ctx, tenantName(0))
	if err != nil {
		return err
	}
	if _, err := create("extensions", o, map[string]any{"name": extName(0), "first_name": "Bench", "sip_secret": benchSecret}); err != nil {
		return err
	}
	if _, err := create("dids", models.Owner{}, map[string]any{"number": didNumber(0), "tenant": tenantName(0)}); err != nil {
		return err
	}
	if _, err := create("inbound_routes", o, map[string]any{"name": "main", "did": didNumber(0), "destination": map[string]any{"type": "extension", "target": extName(0)}}); err != nil {
		return err
	}
	if _, err := create("outbound_routes", o, map[string]any{"name": "national", "priority": 10, "trunks": []string{benchTrunk},
		"patterns": []map[string]any{{"match": "0XXXXXXXXX", "strip_digits": 1, "prepend": "+27"}}}); err != nil {
		return err
	}
	// The other tenants, then the rows that hang off each tenant.
	if err := copyRows(ctx, st, "tenants", "tenant = ?", []any{tenantName(0)}, tenantCount-1, func(i int) map[string]any {
		return map[string]any{"tenant": tenantName(i + 1)}
	}); err != nil {
		return err
	}
	ids := map[string]int64{}
	var list []struct {
		ID     int64  `db:"id"`
		Tenant string `db:"tenant"`
	}
	if err := st.Querier().SelectContext(ctx, &list, "SELECT id, tenant FROM tenants WHERE tenant LIKE 'bench_t%'"); err != nil {
		return err
	}
	for _, t := range list {
		ids[t.Tenant] = t.ID
	}
	// Rows are made per batch, not all first: a million maps would be
	// gigabytes in the load generator.
	if err := copyRows(ctx, st, "extensions", "tenant_id = ? AND name = ?", []any{o.TenantID, extName(0)}, tenantCount*extsPerTenant-1, func(k int) map[string]any {
		k++ // the template is the first
		i, j := k/extsPerTenant, k%extsPerTenant
		return map[string]any{"tenant_id": ids[tenantName(i)], "name": extName(j), "callerid": "Bench <" + extName(j) + ">"}
	}); err != nil {
		return err
	}
	perTenant := func(table, where string, args []any, extra func(i int) map[string]any) error {
		var rows []map[string]any
		for i := 1; i < tenantCount; i++ {
			r := map[string]any{"tenant_id": ids[tenantName(i)]}
			if extra != nil {
				if r = extra(i); r == nil {
					continue
				}
				r["tenant_id"] = ids[tenantName(i)]
			}
			rows = append(rows, r)
		}
		return copyRows(ctx, st, table, where, args, len(rows), func(i int) map[string]any { return rows[i] })
	}
	if err := perTenant("office_modes", "tenant_id = ?", []any{o.TenantID}, nil); err != nil {
		return err
	}
	withDID := func(f func(i int) map[string]any) func(int) map[string]any {
		return func(i int) map[string]any {
			if i >= didTenants {
				return nil
			}
			return f(i)
		}
	}
	if err := perTenant("outbound_routes", "tenant_id = ?", []any{o.TenantID}, withDID(func(int) map[string]any { return map[string]any{} })); err != nil {
		return err
	}
	if err := perTenant("inbound_routes", "tenant_id = ?", []any{o.TenantID}, withDID(func(i int) map[string]any { return map[string]any{"did": didNumber(i)} })); err != nil {
		return err
	}
	return copyRows(ctx, st, "dids", "number = ?", []any{didNumber(0)}, didTenants-1, func(i int) map[string]any {
		return map[string]any{"number": didNumber(i + 1), "tenant": tenantName(i + 1)}
	})
}

// copyRows inserts n rows, row i a copy of the template row selected by
// where with the columns of override(i) replaced (id and the unique keys
// must be among them or be left to the database), in multi-row INSERTs
// of one transaction each.
func copyRows(ctx context.Context, st *models.Store, table, where string, args []any, n int, override func(i int) map[string]any) error {
	tmpl := map[string]any{}
	rows, err := st.Querier().QueryContext(ctx, "SELECT * FROM "+table+" WHERE "+where, args...)
	if err != nil {
		return fmt.Errorf("template %s: %w", table, err)
	}
	found := false
	for rows.Next() {
		found = true
		if err := rows.MapScan(tmpl); err != nil {
			rows.Close()
			return err
		}
	}
	rows.Close()
	if !found {
		return fmt.Errorf("template %s: no row", table)
	}
	delete(tmpl, "id")
	cols := make([]string, 0, len(tmpl))
	for c := range tmpl {
		cols = append(cols, c)
	}
	rowSQL := "(?" + strings.Repeat(",?", len(cols)-1) + ")"
	batch := 30000 / len(cols)
	for start := 0; start < n; start += batch {
		end := min(start+batch, n)
		var vals []any
		parts := make([]string, 0, end-start)
		for i := start; i < end; i++ {
			ov := override(i)
			for _, c := range cols {
				if v, ok := ov[c]; ok {
					vals = append(vals, v)
				} else {
					vals = append(vals, tmpl[c])
				}
			}
			parts = append(parts, rowSQL)
		}
		q := "INSERT INTO " + table + " (" + strings.Join(cols, ",") + ") VALUES " + strings.Join(parts, ",")
		if _, err := st.Querier().ExecContext(ctx, q, vals...); err != nil {
			return fmt.Errorf("copy %s: %w", table, err)
		}
	}
	return nil
}

package models

import "strings"

// ColumnSpec is one column as the declarations say it must be.
type ColumnSpec struct {
	Name    string
	Type    string // lower case, as the dialect reports it (varchar(64), integer)
	NotNull bool
	Default string // "" for none
}

// ForeignKey is a column that references another table's id.
type ForeignKey struct{ Column, Table string }

// TableSpec is a resource's table as its declaration says it must be:
// the schema test compares the migrated database with it on both dialects.
type TableSpec struct {
	Table   string
	Columns []ColumnSpec
	// Unique lists the unique keys (tenant_id first for tenant resources).
	Unique      [][]string
	ForeignKeys []ForeignKey
}

// TableSpecOf derives res's table from its declaration, in dialect d.
func TableSpecOf(res *Resource, d Dialect) TableSpec {
	spec := TableSpec{Table: res.Table}
	col := func(name, typ string, notNull bool, def string) {
		spec.Columns = append(spec.Columns, ColumnSpec{Name: name, Type: strings.ToLower(typ), NotNull: notNull, Default: def})
	}
	if !res.Singleton || res.Scope == TenantScope {
		col("id", d.intType(), true, "")
	}
	if res.Scope == TenantScope {
		col("tenant_id", d.intType(), true, "")
		spec.ForeignKeys = append(spec.ForeignKeys, ForeignKey{"tenant_id", "tenants"})
	}
	uniqueCols := uniqueColumns(res)
	for _, f := range res.Fields {
		if !f.Stored() {
			continue
		}
		typ := d.columnType(f, uniqueCols[f.Name])
		notNull := strings.Contains(typ, "NOT NULL")
		def := ""
		if i := strings.Index(typ, " DEFAULT "); i >= 0 {
			def = typ[i+len(" DEFAULT "):]
		}
		base := typ
		for _, cut := range []string{" COLLATE", " NOT NULL", " NULL"} {
			if i := strings.Index(base, cut); i >= 0 {
				base = base[:i]
			}
		}
		col(f.Name, base, notNull, def)
		if f.Ref != "" && f.Type == Int {
			spec.ForeignKeys = append(spec.ForeignKeys, ForeignKey{f.Name, refTable(f.Ref)})
		}
	}
	col("created_at", d.timeType(), true, "")
	col("updated_at", d.timeType(), true, "")
	if res.Singleton && res.Scope == TenantScope {
		spec.Unique = append(spec.Unique, []string{"tenant_id"})
	}
	spec.Unique = append(spec.Unique, uniqueKeys(res)...)
	return spec
}

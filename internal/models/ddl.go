package models

import (
	"fmt"
	"strings"
)

// DDL renders a CREATE TABLE statement for a resource in the dialect. It is
// the starting point of a new resource's migration file (switchboard
// schema-sql <resource>), not something run at start: migrations are
// reviewed, numbered files, and a test checks they carry every field.
func DDL(res *Resource, d Dialect) string {
	var cols []string
	if !res.Singleton || res.Scope == TenantScope {
		cols = append(cols, d.autoID())
	}
	if res.Scope == TenantScope {
		cols = append(cols, "tenant_id "+d.intType()+" NOT NULL")
	}
	uniqueCols := uniqueColumns(res)
	for _, f := range res.Fields {
		if !f.Stored() {
			continue
		}
		cols = append(cols, f.Name+" "+d.columnType(f, uniqueCols[f.Name]))
	}
	cols = append(cols, "created_at "+d.timeType()+" NOT NULL", "updated_at "+d.timeType()+" NOT NULL")
	if res.Scope == TenantScope {
		cols = append(cols, "FOREIGN KEY (tenant_id) REFERENCES tenants(id)")
	}
	for _, f := range res.Fields {
		if !fkColumn(f) {
			continue
		}
		cols = append(cols, fmt.Sprintf("FOREIGN KEY (%s) REFERENCES %s(id)", f.Name, refTable(f.Ref)))
	}
	if res.Singleton && res.Scope == TenantScope {
		cols = append(cols, "UNIQUE (tenant_id)")
	}
	for i, key := range uniqueKeys(res) {
		u := res.Unique[i]
		if d.SQLite {
			cols = append(cols, "UNIQUE ("+strings.Join(key, ", ")+")")
		} else {
			cols = append(cols, fmt.Sprintf("UNIQUE KEY %s (%s)", uniqueIndexName(res, u), strings.Join(key, ", ")))
		}
	}
	suffix := ""
	if !d.SQLite {
		suffix = " ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci"
	}
	return fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (\n  %s\n)%s;\n", res.Table, strings.Join(cols, ",\n  "), suffix)
}

// uniqueColumns are the columns that take part in a unique key.
func uniqueColumns(res *Resource) map[string]bool {
	out := map[string]bool{}
	for _, u := range res.Unique {
		for _, c := range u {
			out[c] = true
		}
	}
	return out
}

// uniqueKeys are res.Unique as stored: tenant resources' keys start with
// tenant_id.
func uniqueKeys(res *Resource) [][]string {
	out := make([][]string, len(res.Unique))
	for i, u := range res.Unique {
		out[i] = u
		if res.Scope == TenantScope {
			out[i] = append([]string{"tenant_id"}, u...)
		}
	}
	return out
}

// refTable maps a referenced resource name to its table (they match except
// for declared exceptions).
func refTable(name string) string {
	for _, r := range Resources {
		if r.Name == name {
			return r.Table
		}
	}
	return name
}

func (d Dialect) intType() string {
	if d.SQLite {
		return "INTEGER"
	}
	return "BIGINT"
}

func (d Dialect) timeType() string {
	if d.SQLite {
		return "TEXT"
	}
	return "VARCHAR(32)"
}

// maxVarchar is the longest string kept in a MySQL VARCHAR column.
const maxVarchar = 4096

func (d Dialect) columnType(f *Field, unique bool) string {
	null := " NULL"
	if f.Required {
		null = " NOT NULL"
	}
	switch f.Type {
	case Int:
		return d.intType() + null
	case Bool:
		if d.SQLite {
			return "INTEGER NOT NULL DEFAULT 0"
		}
		return "TINYINT(1) NOT NULL DEFAULT 0"
	case Number:
		if d.SQLite {
			return "REAL" + null
		}
		return "DOUBLE" + null
	case Time:
		return d.timeType() + " NULL"
	case String:
		if d.SQLite {
			if unique {
				return "TEXT COLLATE NOCASE" + null
			}
			return "TEXT" + null
		}
		n := f.MaxLen
		if n == 0 {
			n = defaultMaxLen
		}
		if f.Secret != NotSecret {
			return "TEXT" + null
		}
		if n > maxVarchar {
			// data: URLs (logos, pictures) and long bodies do not fit a
			// VARCHAR within InnoDB's 64 KiB row limit.
			return "MEDIUMTEXT" + null
		}
		return fmt.Sprintf("VARCHAR(%d)%s", n, null)
	}
	// lists, objects and destinations are JSON text
	return "TEXT" + null
}

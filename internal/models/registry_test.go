package models_test

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/internal/models"
	"github.com/switchboard/switchboard/internal/models/storetest"
)

func TestRegistryAcceptsDeclarations(t *testing.T) {
	reg, err := models.NewRegistry(models.Resources)
	if err != nil {
		t.Fatalf("declared resources are invalid: %v", err)
	}
	if len(reg.Resources()) != len(models.Resources) {
		t.Fatalf("registry holds %d resources, want %d", len(reg.Resources()), len(models.Resources))
	}
}

func TestRegistryRefusesBadDeclarations(t *testing.T) {
	cases := []struct {
		name string
		res  []*models.Resource
		want string
	}{
		{"duplicate name", []*models.Resource{{Name: "a", Table: "a"}, {Name: "a", Table: "b"}}, "duplicate"},
		{"unsafe table", []*models.Resource{{Name: "a", Table: "a; drop"}}, "identifiers"},
		{"unknown ref", []*models.Resource{{Name: "a", Table: "a", Fields: []*models.Field{{Name: "x_id", Type: models.Int, Ref: "nope"}}}}, "unknown reference"},
		{"bad pattern", []*models.Resource{{Name: "a", Table: "a", Fields: []*models.Field{{Name: "x", Pattern: "("}}}}, "pattern"},
		{"duplicate field", []*models.Resource{{Name: "a", Table: "a", Fields: []*models.Field{{Name: "x"}, {Name: "x"}}}}, "duplicate field"},
		{"key not a field", []*models.Resource{{Name: "a", Table: "a", Key: "nope"}}, "key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := models.NewRegistry(tc.res)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want error containing %q", err, tc.want)
			}
		})
	}
}

func TestMigrationsMatchAcrossDialects(t *testing.T) {
	my, err := models.Migrations(models.DialectNamed("mysql"))
	if err != nil {
		t.Fatal(err)
	}
	lite, err := models.Migrations(models.DialectNamed("sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	if len(my) != len(lite) {
		t.Fatalf("mysql has %d migrations, sqlite %d", len(my), len(lite))
	}
	for i := range my {
		if my[i].Name != lite[i].Name {
			t.Errorf("migration %d: mysql %s, sqlite %s", i+1, my[i].Name, lite[i].Name)
		}
	}
}

func TestMigrateTwiceAndConcurrently(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			a := storetest.Open(t, b)
			c := storetest.Open(t, b)
			errs := make(chan error, 2)
			go func() { errs <- a.Migrate(context.Background()) }()
			go func() { errs <- c.Migrate(context.Background()) }()
			for range 2 {
				if err := <-errs; err != nil {
					t.Fatalf("concurrent migrate: %v", err)
				}
			}
			if err := a.SchemaCurrent(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestEveryPatternHasWords: validation messages describe patterns in words,
// so every declared pattern needs an entry in patternWords.
func TestEveryPatternHasWords(t *testing.T) {
	if missing := models.PatternsWithoutWords(models.Resources); len(missing) > 0 {
		t.Fatalf("patterns without words (add them to patternWords):\n%s", strings.Join(missing, "\n"))
	}
}

// TestSchemaMatchesDeclarations compares every resource's migrated table
// with its declaration in full, on both dialects: each column's type, NULL
// and default, the unique keys (the 409 answers depend on them) and the
// foreign keys. Read from information_schema on MySQL/MariaDB and from
// pragmas on SQLite.
func TestSchemaMatchesDeclarations(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		for _, res := range models.Resources {
			want := models.TableSpecOf(res, st.Dialect())
			got := readTable(t, ctx, st, res.Table)
			for _, c := range want.Columns {
				if res.Custom() && c.Name == "key" {
					continue // the key's value is never stored; its hash is
				}
				g, ok := got.cols[c.Name]
				switch {
				case !ok:
					t.Errorf("%s.%s: missing (declared %s)", res.Table, c.Name, c.Type)
				case res.Custom():
					// Hand-written tables (API keys): the declaration is the API
					// shape; storage is checked by its own store tests.
				case g.Type != c.Type:
					t.Errorf("%s.%s: type %s, declared %s", res.Table, c.Name, g.Type, c.Type)
				case g.NotNull != c.NotNull:
					t.Errorf("%s.%s: NOT NULL %v, declared %v", res.Table, c.Name, g.NotNull, c.NotNull)
				case g.Default != c.Default:
					t.Errorf("%s.%s: default %q, declared %q", res.Table, c.Name, g.Default, c.Default)
				}
			}
			if res.Custom() {
				continue // hand-written tables keep columns beyond the declaration
			}
			for name := range got.cols {
				if !hasColumn(want, name) {
					t.Errorf("%s.%s: column not declared", res.Table, name)
				}
			}
			wantU, gotU := keySet(want.Unique), keySet(got.unique)
			if fmt.Sprint(wantU) != fmt.Sprint(gotU) {
				t.Errorf("%s unique keys %v, declared %v", res.Table, gotU, wantU)
			}
			var wantFK []string
			for _, fk := range want.ForeignKeys {
				wantFK = append(wantFK, fk.Column+"->"+fk.Table)
			}
			sort.Strings(wantFK)
			if fmt.Sprint(wantFK) != fmt.Sprint(got.fks) {
				t.Errorf("%s foreign keys %v, declared %v", res.Table, got.fks, wantFK)
			}
		}
	})
}

func hasColumn(spec models.TableSpec, name string) bool {
	for _, c := range spec.Columns {
		if c.Name == name {
			return true
		}
	}
	return false
}

func keySet(keys [][]string) []string {
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, strings.Join(k, ","))
	}
	sort.Strings(out)
	return out
}

type liveTable struct {
	cols   map[string]models.ColumnSpec
	unique [][]string
	fks    []string // column->table, sorted
}

var displayWidth = regexp.MustCompile(`^(bigint|int|smallint)\(\d+\)`)

func readTable(t *testing.T, ctx context.Context, st *models.Store, table string) liveTable {
	t.Helper()
	lt := liveTable{cols: map[string]models.ColumnSpec{}}
	db := st.Querier()
	if st.Dialect().SQLite {
		var cols []struct {
			CID     int     `db:"cid"`
			Name    string  `db:"name"`
			Type    string  `db:"type"`
			NotNull bool    `db:"notnull"`
			Default *string `db:"dflt_value"`
			PK      int     `db:"pk"`
		}
		if err := db.SelectContext(ctx, &cols, "SELECT cid, name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?)", table); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		for _, c := range cols {
			def := ""
			if c.Default != nil {
				def = *c.Default
			}
			lt.cols[c.Name] = models.ColumnSpec{Name: c.Name, Type: strings.ToLower(c.Type), NotNull: c.NotNull || c.PK > 0, Default: def}
		}
		var idx []struct {
			Name   string `db:"name"`
			Unique bool   `db:"unique"`
			Origin string `db:"origin"`
		}
		if err := db.SelectContext(ctx, &idx, "SELECT name, \"unique\", origin FROM pragma_index_list(?)", table); err != nil {
			t.Fatal(err)
		}
		for _, ix := range idx {
			if !ix.Unique || ix.Origin == "pk" {
				continue
			}
			var names []string
			if err := db.SelectContext(ctx, &names, "SELECT name FROM pragma_index_info(?) ORDER BY seqno", ix.Name); err != nil {
				t.Fatal(err)
			}
			lt.unique = append(lt.unique, names)
		}
		var fks []struct {
			From  string `db:"from"`
			Table string `db:"table"`
		}
		if err := db.SelectContext(ctx, &fks, "SELECT \"from\", \"table\" FROM pragma_foreign_key_list(?)", table); err != nil {
			t.Fatal(err)
		}
		for _, fk := range fks {
			lt.fks = append(lt.fks, fk.From+"->"+fk.Table)
		}
	} else {
		var cols []struct {
			Name     string  `db:"COLUMN_NAME"`
			Type     string  `db:"COLUMN_TYPE"`
			Nullable string  `db:"IS_NULLABLE"`
			Default  *string `db:"COLUMN_DEFAULT"`
		}
		if err := db.SelectContext(ctx, &cols, "SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?", table); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		for _, c := range cols {
			def := ""
			if c.Default != nil && *c.Default != "NULL" {
				def = strings.Trim(*c.Default, "'")
			}
			typ := displayWidth.ReplaceAllString(strings.ToLower(c.Type), "$1")
			lt.cols[c.Name] = models.ColumnSpec{Name: c.Name, Type: typ, NotNull: c.Nullable == "NO", Default: def}
		}
		var idx []struct {
			Name   string `db:"INDEX_NAME"`
			Column string `db:"COLUMN_NAME"`
		}
		if err := db.SelectContext(ctx, &idx, "SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND NON_UNIQUE = 0 AND INDEX_NAME <> 'PRIMARY' ORDER BY INDEX_NAME, SEQ_IN_INDEX", table); err != nil {
			t.Fatal(err)
		}
		byName := map[string][]string{}
		var order []string
		for _, ix := range idx {
			if byName[ix.Name] == nil {
				order = append(order, ix.Name)
			}
			byName[ix.Name] = append(byName[ix.Name], ix.Column)
		}
		for _, n := range order {
			lt.unique = append(lt.unique, byName[n])
		}
		var fks []struct {
			Column string `db:"COLUMN_NAME"`
			Table  string `db:"REFERENCED_TABLE_NAME"`
		}
		if err := db.SelectContext(ctx, &fks, "SELECT COLUMN_NAME, REFERENCED_TABLE_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND REFERENCED_TABLE_NAME IS NOT NULL", table); err != nil {
			t.Fatal(err)
		}
		for _, fk := range fks {
			lt.fks = append(lt.fks, fk.Column+"->"+fk.Table)
		}
	}
	sort.Strings(lt.fks)
	return lt
}

// TestEveryTableHasAPrimaryKey: Galera replicates rows by primary key (a
// table without one is refused or replicated unsafely), so every table of
// the schema has one, on both dialects.
func TestEveryTableHasAPrimaryKey(t *testing.T) {
	for _, b := range storetest.Backends(t) {
		t.Run(b.Name, func(t *testing.T) {
			st := storetest.Open(t, b)
			var missing []string
			q := `SELECT t.table_name FROM information_schema.tables t
				WHERE t.table_schema = DATABASE() AND t.table_type = 'BASE TABLE'
				AND NOT EXISTS (SELECT 1 FROM information_schema.table_constraints c
					WHERE c.table_schema = t.table_schema AND c.table_name = t.table_name AND c.constraint_type = 'PRIMARY KEY')`
			if b.Name == "sqlite" {
				q = `SELECT m.name FROM sqlite_master m WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'
					AND NOT EXISTS (SELECT 1 FROM pragma_table_info(m.name) p WHERE p.pk > 0)`
			}
			if err := st.Querier().SelectContext(t.Context(), &missing, q); err != nil {
				t.Fatal(err)
			}
			if len(missing) > 0 {
				t.Fatalf("tables without a primary key: %v", missing)
			}
		})
	}
}

package models_test

import (
	"context"
	"strings"
	"testing"

	"github.com/switchboard/switchboard/models"
	"github.com/switchboard/switchboard/models/storetest"
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

// TestSchemaHasEveryDeclaredField is the check that keeps the registry and
// the migrations of both dialects in step.
func TestSchemaHasEveryDeclaredField(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *models.Store) {
		ctx := context.Background()
		for _, res := range models.Resources {
			cols := columnsOf(t, ctx, st, res.Table)
			want := []string{"created_at", "updated_at"}
			if res.Scope == models.TenantScope {
				want = append(want, "tenant_id")
			}
			for _, f := range res.Fields {
				if f.Stored() && !(res.Custom() && f.Name == "key") {
					want = append(want, f.Name)
				}
			}
			for _, c := range want {
				if !cols[c] {
					t.Errorf("table %s (resource %s) has no column %s", res.Table, res.Name, c)
				}
			}
		}
	})
}

func columnsOf(t *testing.T, ctx context.Context, st *models.Store, table string) map[string]bool {
	t.Helper()
	q := "SELECT * FROM " + table + " LIMIT 0"
	rows, err := st.DB().QueryxContext(ctx, q)
	if err != nil {
		t.Fatalf("table %s: %v", table, err)
	}
	defer rows.Close()
	names, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, n := range names {
		out[n] = true
	}
	return out
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

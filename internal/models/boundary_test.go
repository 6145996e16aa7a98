package models_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoRawSQLOutsideStore holds the store boundary: no raw database
// handle exists outside internal/models. Packages with tables of their own
// run SQL through models.Querier (Store.Querier, Store.InTx,
// Store.WithEvents), which translates driver errors once into the store's
// errors. The rule, for every non-test .go file of the module outside
// internal/models (internal/models/storetest is inside):
//
//   - no import of sqlx, of a database driver (go-sql-driver/mysql,
//     modernc.org/sqlite, ...) or of database/sql/driver;
//   - database/sql only for its value types: the Null* scanners,
//     RawBytes, Scanner and Result (what Querier.ExecContext answers).
//     Handles (sql.DB, sql.Tx, sql.Conn, sql.Stmt, sql.Rows), sql.Open and
//     driver sentinels such as sql.ErrNoRows (models.ErrNotFound is what a
//     querier answers) are refused;
//   - no call of a method DB() with no arguments (the raw pool the store
//     once exposed).
//
// Tests may use Store.Querier like any package; they are not checked.
func TestNoRawSQLOutsideStore(t *testing.T) {
	root := filepath.Join("..", "..")
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not found from internal/models: %v", err)
	}
	forbidden := []string{
		"github.com/jmoiron/sqlx",
		"github.com/go-sql-driver/mysql",
		"modernc.org/sqlite",
		"github.com/mattn/go-sqlite3",
		"github.com/lib/pq",
		"github.com/jackc/pgx",
		"database/sql/driver",
	}
	valueTypes := map[string]bool{
		"NullString": true, "NullInt64": true, "NullInt32": true, "NullInt16": true, "NullByte": true,
		"NullFloat64": true, "NullBool": true, "NullTime": true, "Null": true,
		"RawBytes": true, "Scanner": true, "Result": true,
	}
	store := filepath.Join(root, "internal", "models")
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path == store || name == "vendor" || name == "testdata" || name == "node_modules" || (strings.HasPrefix(name, ".") && path != root) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		checked++
		rel, _ := filepath.Rel(root, path)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		sqlName := ""
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if p == bad || strings.HasPrefix(p, bad+"/") {
					t.Errorf("%s imports %s: run SQL through models.Querier (Store.Querier, Store.InTx, Store.WithEvents)", rel, p)
				}
			}
			if p == "database/sql" {
				sqlName = "sql"
				if imp.Name != nil {
					sqlName = imp.Name.Name
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && sqlName != "" && x.Name == sqlName && !valueTypes[n.Sel.Name] {
					t.Errorf("%s uses database/sql's %s: only its value types (Null*, RawBytes, Scanner, Result) may be used outside internal/models", rel, n.Sel.Name)
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "DB" && len(n.Args) == 0 {
					t.Errorf("%s calls .DB(): no raw database handle outside internal/models", rel)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d files checked: is the module root right?", checked)
	}
}

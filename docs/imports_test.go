package docs_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/switchboard/switchboard/"

// TestImportRules holds the package table of architecture.md to the code:
// every package has a row, and every import of one of ours is one its
// row's "may import" column allows. The picture cannot drift silently.
func TestImportRules(t *testing.T) {
	rules := readRules(t, "architecture.md")
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := map[string]bool{}
	for dec.More() {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(p.ImportPath, module)
		seen[name] = true
		allowed, ok := rules[name]
		if !ok {
			t.Errorf("package %s has no row in docs/architecture.md", name)
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			dep := strings.TrimPrefix(imp, module)
			if !allows(allowed, dep) {
				t.Errorf("%s imports %s, which its row in docs/architecture.md does not allow (%s)", name, dep, strings.Join(allowed, ", "))
			}
		}
	}
	var stale []string
	for name := range rules {
		if !seen[name] {
			stale = append(stale, name)
		}
	}
	sort.Strings(stale)
	for _, name := range stale {
		t.Errorf("docs/architecture.md has a row for %s, which is not a package", name)
	}
}

// allows reports whether one of the patterns admits the package: an exact
// path, or a group written as "dir/..." (the group's own package included).
func allows(patterns []string, pkg string) bool {
	for _, p := range patterns {
		if group, ok := strings.CutSuffix(p, "/..."); ok {
			if pkg == group || strings.HasPrefix(pkg, group+"/") {
				return true
			}
		} else if p == pkg {
			return true
		}
	}
	return false
}

var code = regexp.MustCompile("`([^`]+)`")

// readRules reads the rows of the "Packages and their one job" table:
// | `package` | job | `allowed`, `allowed/...` or "nothing of ours" |.
func readRules(t *testing.T, path string) map[string][]string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rules := map[string][]string{}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## Packages and their one job"
			continue
		case !in || !strings.HasPrefix(line, "| `"):
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), " | ")
		if len(cells) < 3 {
			t.Fatalf("row without three cells: %s", line)
		}
		pkg := strings.Trim(strings.TrimSpace(cells[0]), "`")
		var allowed []string
		for _, m := range code.FindAllStringSubmatch(cells[len(cells)-1], -1) {
			allowed = append(allowed, m[1])
		}
		if len(allowed) == 0 && strings.TrimSpace(cells[len(cells)-1]) != "nothing of ours" {
			t.Errorf("row %s: the last cell names no package and is not \"nothing of ours\"", pkg)
		}
		if _, dup := rules[pkg]; dup {
			t.Errorf("two rows for %s", pkg)
		}
		rules[pkg] = allowed
	}
	if len(rules) == 0 {
		t.Fatal("no package table found in " + path)
	}
	return rules
}

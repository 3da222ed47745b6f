package marquee_test

import (
	"go/build"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestArchitectureTable checks docs/architecture.md's table of packages
// against the code, and that doc.go names every package: every package
// of the module has a row (or shares one),
// and each row's "depends on" column names exactly the module's packages
// its packages import (outside libraries are named in plain words and not
// checked; "root" is package marquee).
func TestArchitectureTable(t *testing.T) {
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	code := map[string][]string{} // a package's directory → the module's packages it imports
	err = filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "deploy" || name == "scripts") {
			return filepath.SkipDir
		}
		p, err := build.Default.ImportDir(path, 0)
		if err != nil {
			return nil // no Go files here
		}
		var mine []string
		for _, imp := range p.Imports {
			if imp == "marquee" || strings.HasPrefix(imp, "marquee/") {
				mine = append(mine, imp)
			}
		}
		code[importPath(path)] = mine
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| (`[^|]+`(?: \\(root\\))?(?:, `[^|]+`)*) \\| [^\\n]* \\| ([^|\\n]*) \\|$")
	tick := regexp.MustCompile("`([a-z0-9/_-]+)`")
	documented := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		var pkgs []string
		for _, n := range tick.FindAllStringSubmatch(m[1], -1) {
			pkgs = append(pkgs, importPath(n[1]))
		}
		want := map[string]bool{}
		for _, p := range pkgs {
			if _, ok := code[p]; !ok {
				t.Errorf("docs/architecture.md has a row for %s, which is not a package", p)
				continue
			}
			documented[p] = true
			for _, imp := range code[p] {
				if !slices.Contains(pkgs, imp) {
					want[imp] = true
				}
			}
		}
		got := map[string]bool{}
		deps := m[2]
		if regexp.MustCompile(`\broot\b`).MatchString(deps) {
			got["marquee"] = true
		}
		for _, n := range tick.FindAllStringSubmatch(deps, -1) {
			if _, ok := code[importPath(n[1])]; ok {
				got[importPath(n[1])] = true
			}
		}
		if missing, extra := diff(want, got), diff(got, want); len(missing) > 0 || len(extra) > 0 {
			t.Errorf("docs/architecture.md: %s depends on %v, not named; names %v, not imported", strings.Join(pkgs, ", "), missing, extra)
		}
	}
	pkgDoc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	for p := range code {
		if name, ok := strings.CutPrefix(p, "marquee/"); ok && !regexp.MustCompile(`[ (]`+regexp.QuoteMeta(name)+`[:,;) \n]`).Match(pkgDoc) {
			t.Errorf("doc.go does not name package %s", name)
		}
		// A package's test helpers (targeting/targetingtest, …) are
		// told of in their package's row.
		if helper := strings.HasSuffix(p, "test") && strings.Count(p, "/") > 1; !documented[p] && !helper {
			t.Errorf("docs/architecture.md has no row for package %s", p)
		}
	}
}

// importPath is the import path of the module's directory dir ("." and
// "root": marquee).
func importPath(dir string) string {
	if dir == "." || dir == "root" || dir == "marquee" {
		return "marquee"
	}
	return "marquee/" + filepath.ToSlash(dir)
}

// diff is what a holds that b does not, sorted.
func diff(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

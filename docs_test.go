package marquee_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestREADMERoutes: the README's routes table names every route group —
// every literal segment of every route web/routes.go serves appears in
// it as "/segment".
func TestREADMERoutes(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	routes, err := os.ReadFile("web/routes.go")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(readme), "\n## Routes\n")
	end := strings.Index(string(readme)[start+1:], "\n## ")
	if start < 0 || end < 0 {
		t.Fatal("README.md: no ## Routes section")
	}
	table := string(readme)[start : start+1+end]
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile(`\{"(?:GET|POST|PUT|DELETE|HEAD|OPTIONS|PATCH)", "([^"]+)"`).FindAllStringSubmatch(string(routes), -1) {
		for _, seg := range strings.Split(m[1], "/") {
			if seg == "" || strings.HasPrefix(seg, "{") || seen[seg] {
				continue
			}
			seen[seg] = true
			if !strings.Contains(table, "/"+seg) {
				t.Errorf("README.md's routes table does not name /%s (route %s)", seg, m[1])
			}
		}
	}
	if len(seen) < 40 {
		t.Fatalf("read %d route segments from web/routes.go; want the routes table's", len(seen))
	}
}

// slug is the anchor GitHub gives a heading: lower case, only letters,
// digits, spaces, hyphens and underscores kept, spaces as hyphens.
func slug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// TestDocAnchors: every link to a section — "(#anchor)" within a file,
// "(file.md#anchor)" to another — in README.md and docs/*.md names a
// heading that exists.
func TestDocAnchors(t *testing.T) {
	files, _ := filepath.Glob("docs/*.md")
	files = append(files, "README.md", "CONTRIBUTING.md")
	anchors := map[string]map[string]bool{}
	read := func(f string) string {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	heading := regexp.MustCompile("(?m)^#{1,6} (.+)$")
	fence := regexp.MustCompile("(?s)```.*?```")
	for _, f := range files {
		anchors[f] = map[string]bool{}
		for _, m := range heading.FindAllStringSubmatch(fence.ReplaceAllString(read(f), ""), -1) {
			s := slug(m[1])
			for n := 1; anchors[f][s]; n++ { // a repeated heading's anchor takes -1, -2…
				s = slug(m[1]) + "-" + strconv.Itoa(n)
			}
			anchors[f][s] = true
		}
	}
	link := regexp.MustCompile(`\]\(([a-zA-Z0-9_./-]*\.md)?#([^)\s]+)\)`)
	for _, f := range files {
		for _, m := range link.FindAllStringSubmatch(read(f), -1) {
			target := f
			if m[1] != "" {
				target = filepath.Clean(filepath.Join(filepath.Dir(f), m[1]))
			}
			have, ok := anchors[target]
			if !ok {
				continue // a file outside the docs checked here
			}
			if !have[m[2]] {
				t.Errorf("%s: a link to %s#%s names no heading", f, target, m[2])
			}
		}
	}
}

// TestDocNames: every backticked Go name in README.md and docs/*.md of
// the form pkg.Name or pkg.Name.Member, where pkg is one of the module's
// packages (marquee: the root), names what the package declares — a
// type, function, variable or constant, and a method or field of the
// type — so that the docs cannot keep a name the code dropped.
func TestDocNames(t *testing.T) {
	pkgs := map[string][]*doc.Package{} // by the name the docs use: its directory's base, or marquee; its tests' too (TestX, BenchmarkX)
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "deploy" || name == "scripts" || name == "third_party") {
			return filepath.SkipDir
		}
		fset := token.NewFileSet()
		goFiles, _ := filepath.Glob(filepath.Join(path, "*.go"))
		parsed := map[string][]*ast.File{} // by package name: the package and its external tests
		for _, name := range goFiles {
			src, err := os.ReadFile(name)
			if err != nil {
				return err
			}
			// A _test.go file is named otherwise: doc.NewFromFiles reads
			// one for its examples only, and the docs name tests.
			f, err := parser.ParseFile(fset, strings.TrimSuffix(name, "_test.go")+"_t.go", src, parser.ParseComments)
			if err != nil {
				return err
			}
			parsed[f.Name.Name] = append(parsed[f.Name.Name], f)
		}
		for name, files := range parsed {
			if name == "main" || name == "main_test" {
				continue
			}
			dp, err := doc.NewFromFiles(fset, files, "marquee/"+path, doc.AllDecls|doc.AllMethods)
			if err != nil {
				return err
			}

			key := filepath.Base(path)
			if path == "." {
				key = "marquee"
			}
			if len(pkgs[key]) == 0 || filepath.Base(path) == key || path == "." {
				pkgs[key] = append(pkgs[key], dp)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("docs/*.md")
	files = append(files, "README.md", "CONTRIBUTING.md")
	name := regexp.MustCompile("`([a-z][a-z0-9]*)\\.([A-Z][A-Za-z0-9_]*)(?:\\.([A-Z][A-Za-z0-9_]*))?(?:\\(\\))?`")
	var bad []string
	checked := 0
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range name.FindAllStringSubmatch(string(text), -1) {
			ps, ok := pkgs[m[1]]
			if !ok {
				continue // another library's (fasthttp.Server, time.Duration)
			}
			checked++
			if !slicesContainsFunc(ps, func(p *doc.Package) bool { return declares(p, m[2], m[3]) }) {
				bad = append(bad, f+": "+strings.Trim(m[0], "`"))
			}
		}
	}
	if checked < 50 {
		t.Errorf("checked %d names in the docs; want the scores they hold (is the pattern right?)", checked)
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s names nothing the package declares", b)
	}
}

// declares says whether p declares name (and, when member is not "", a
// method or field of the type name, or a method of a type name's value
// is of).
func declares(p *doc.Package, name, member string) bool {
	for _, f := range p.Funcs {
		if f.Name == name && member == "" {
			return true
		}
	}
	for _, vs := range [][]*doc.Value{p.Vars, p.Consts} {
		for _, v := range vs {
			if slicesContains(v.Names, name) {
				return member == "" || typeHas(p, v.Decl, member)
			}
		}
	}
	for _, ty := range p.Types {
		for _, vs := range [][]*doc.Value{ty.Vars, ty.Consts} {
			for _, v := range vs {
				if slicesContains(v.Names, name) && member == "" {
					return true
				}
			}
		}
		for _, f := range ty.Funcs {
			if f.Name == name && member == "" {
				return true
			}
		}
		if ty.Name != name {
			continue
		}
		if member == "" {
			return true
		}
		for _, m := range ty.Methods {
			if m.Name == member {
				return true
			}
		}
		return hasField(ty.Decl, member)
	}
	return false
}

// typeHas says whether the type of a package-level variable declared by
// decl has member (a method or field): a variable of a named type of p.
func typeHas(p *doc.Package, decl *ast.GenDecl, member string) bool {
	for _, sp := range decl.Specs {
		vs, ok := sp.(*ast.ValueSpec)
		if !ok {
			continue
		}
		var tname string
		switch tx := vs.Type.(type) {
		case *ast.Ident:
			tname = tx.Name
		case *ast.StarExpr:
			if id, ok := tx.X.(*ast.Ident); ok {
				tname = id.Name
			}
		}
		if tname != "" && declares(p, tname, member) {
			return true
		}
	}
	return true // a variable whose type is not written: not checked
}

// hasField says whether the struct type decl declares field (embedded
// types are not followed: a member of one is taken as declared).
func hasField(decl *ast.GenDecl, field string) bool {
	for _, sp := range decl.Specs {
		ts, ok := sp.(*ast.TypeSpec)
		if !ok {
			continue
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			return ts.Type != nil && isInterfaceWith(ts.Type, field)
		}
		for _, f := range st.Fields.List {
			if len(f.Names) == 0 {
				return true // embedded: not followed
			}
			for _, n := range f.Names {
				if n.Name == field {
					return true
				}
			}
		}
	}
	return false
}

func isInterfaceWith(t ast.Expr, method string) bool {
	it, ok := t.(*ast.InterfaceType)
	if !ok {
		return false
	}
	for _, m := range it.Methods.List {
		for _, n := range m.Names {
			if n.Name == method {
				return true
			}
		}
		if len(m.Names) == 0 {
			return true // embedded: not followed
		}
	}
	return false
}

func slicesContainsFunc(ps []*doc.Package, f func(*doc.Package) bool) bool {
	for _, p := range ps {
		if f(p) {
			return true
		}
	}
	return false
}

func slicesContains(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

package apiguard

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

// root is the module's root, seen from this package's directory.
const root = "../.."

// TestPublicAPIUsesNoDependencyType parses the non-test files of every
// public package (not internal, not a command) and fails on each exported
// function, method, type or struct field whose declaration names a type
// of a package outside the standard library and this module.
func TestPublicAPIUsesNoDependencyType(t *testing.T) {
	module := modulePath(t)
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		base := d.Name()
		if path != root {
			if strings.HasPrefix(base, ".") || base == "testdata" || base == "internal" || base == "cmd" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module
			}
		}
		files, _ := filepath.Glob(filepath.Join(path, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			n++
			for _, bad := range foreignInAPI(t, f, module) {
				t.Errorf("%s/%s: %s", rel, filepath.Base(f), bad)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 20 {
		t.Fatalf("read %d files: not the module's", n)
	}
}

func modulePath(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "module "); ok {
			return strings.TrimSpace(rest)
		}
	}
	t.Fatal("go.mod names no module")
	return ""
}

// foreignInAPI returns, for the exported declarations of file f, each use
// of a type from a package outside the standard library and module.
func foreignInAPI(t *testing.T, f, module string) []string {
	t.Helper()
	af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	// In a type, pkg.Name names a package imported by this file: one of
	// the standard library's or the module's (whose package names are
	// their directories' last elements), else a dependency.
	own := map[string]bool{}
	hasForeign := false
	for _, im := range af.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		first, _, _ := strings.Cut(p, "/")
		if strings.Contains(first, ".") && p != module && !strings.HasPrefix(p, module+"/") {
			hasForeign = true
			continue
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if len(name) > 1 && name[0] == 'v' && strings.Trim(name[1:], "0123456789") == "" {
			q := strings.TrimSuffix(p, "/"+name) // math/rand/v2 is rand
			name = q[strings.LastIndex(q, "/")+1:]
		}
		if im.Name != nil {
			name = im.Name.Name
		}
		own[name] = true
	}
	if !hasForeign {
		return nil
	}
	var out []string
	check := func(what string, n ast.Node) {
		ast.Inspect(n, func(m ast.Node) bool {
			sel, ok := m.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && !own[id.Name] {
				out = append(out, what+" uses "+id.Name+"."+sel.Sel.Name+", a dependency's type")
			}
			return true
		})
	}
	for _, decl := range af.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || (d.Recv != nil && !exportedRecv(d.Recv)) {
				continue
			}
			check(d.Name.Name, d.Type)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				ts, ok := s.(*ast.TypeSpec)
				if !ok || !ts.Name.IsExported() {
					continue
				}
				if st, ok := ts.Type.(*ast.StructType); ok {
					for _, fld := range st.Fields.List {
						if len(fld.Names) == 0 || fld.Names[0].IsExported() {
							check(ts.Name.Name+" field", fld.Type)
						}
					}
					continue
				}
				check("type "+ts.Name.Name, ts.Type)
			}
		}
	}
	return out
}

// exportedRecv reports whether a method's receiver type is exported.
func exportedRecv(fl *ast.FieldList) bool {
	if len(fl.List) == 0 {
		return false
	}
	e := fl.List[0].Type
	if st, ok := e.(*ast.StarExpr); ok {
		e = st.X
	}
	if ix, ok := e.(*ast.IndexExpr); ok {
		e = ix.X
	}
	id, ok := e.(*ast.Ident)
	return ok && id.IsExported()
}

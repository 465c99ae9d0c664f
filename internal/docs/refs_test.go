package docs

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The Go API named by the docs is read from source with go/parser, so the
// check runs offline in well under a second and needs no build.

// foreign are the packages of other libraries that the docs name. A
// backticked `q.Name` whose q is neither a package of this repository nor a
// variable of a Go example in the docs must be listed here, so that a
// package that moved or went away is not taken for someone else's.
var foreign = map[string]bool{
	// standard library
	"bufio": true, "bytes": true, "context": true, "errors": true, "exec": true, "filepath": true,
	"fmt": true, "http": true, "httptest": true, "io": true, "json": true, "log": true, "net": true,
	"os": true, "signal": true, "slog": true, "strings": true, "sync": true, "synctest": true,
	"testing": true, "time": true, "tls": true, "url": true, "utf8": true, "encoding/json": true,
	"net/http": true, "log/slog": true, "os/exec": true, "runtime": true, "atomic": true,
	"errgroup": true, "iter": true, "maps": true, "slices": true, "strconv": true, "unicode": true,
	// other modules
	"jsontext": true, "retryablehttp": true, "backoff": true, "oauth2": true, "tint": true,
	"cobra": true, "goleak": true, "openai": true, "anthropic": true, "genai": true,
	"otel": true, "trace": true, "metric": true, "propagation": true, "otlptracehttp": true,
	"otlpmetrichttp": true, "tiktoken": true,
	"param": true, // openai-go's and anthropic-sdk-go's param (docs/llm-hosts.md)
}

// sameNameForeign are names of other libraries whose package has the name
// of one of ours (go-sdk's mcp and jsonrpc, mcp-go's client, go-sse's sse),
// each listed whole ("mcp.NewServer") with whose it is. The docs name none
// today; a comparison that does lists them here.
var sameNameForeign = map[string]string{}

// exampleLocals are variables that the docs use and no Go example in them
// declares: a Go example declares its own (conn, res, tb) and those count.
// A one-letter qualifier (`o.HTTPClient`, `s.CreateMessage`) is always
// taken for a variable.
var exampleLocals = map[string]bool{
	"ctx":   true,
	"block": true, // the model's tool_use block in docs/llm-results.md
}

// api is what the repository exports, package by package.
type api struct {
	pkgs   []*pkgAPI
	byDir  map[string]*pkgAPI   // "internal/origin"
	byName map[string][]*pkgAPI // "otelmcp", "client"
	byPath map[string]*pkgAPI   // "github.com/anymcp/anymcp/client"
	tests  map[string][]string  // Test/Fuzz/Benchmark/Example function -> directories
}

type pkgAPI struct {
	dir, name, path string
	decls           map[string]*declInfo // exported top-level names
	tests           map[string]bool      // Test, Fuzz, Benchmark and Example functions
	methods         map[string]map[string]bool
	imports         map[string]string   // name -> import path, over the package's non-test files
	docFiles        []*ast.File         // the non-test files with a package comment
	files           int                 // non-test files
	comments        []*ast.CommentGroup // every comment of the non-test files
	fset            *token.FileSet
}

type declInfo struct {
	spec    *ast.TypeSpec     // nil unless a type
	imports map[string]string // of the file declaring it
}

// loaded is the API read by the first test that needs it (the tests of
// this package do not run in parallel).
var loaded *api

var testFunc = regexp.MustCompile(`^(Test|Fuzz|Benchmark|Example)([A-Z_0-9]\w*)?$`)

// loadAPI parses every package of every module in the repository (go.work's,
// bench's and interop's), test files included for the names of tests.
func loadAPI(t *testing.T) *api {
	t.Helper()
	if loaded != nil {
		return loaded
	}
	a := &api{byDir: map[string]*pkgAPI{}, byName: map[string][]*pkgAPI{}, byPath: map[string]*pkgAPI{}, tests: map[string][]string{}}
	modules := map[string]string{} // directory (relative) -> module path
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		rel := relDir(path)
		if path == root {
			rel = "."
		}
		if b, err := os.ReadFile(filepath.Join(path, "go.mod")); err == nil {
			for _, l := range strings.Split(string(b), "\n") {
				if m, ok := strings.CutPrefix(strings.TrimSpace(l), "module "); ok {
					modules[rel] = strings.Trim(strings.TrimSpace(m), `"`)
				}
			}
		}
		p := parsePackage(t, path, rel)
		if p == nil {
			return nil
		}
		p.path = importPath(modules, rel)
		a.pkgs = append(a.pkgs, p)
		a.byDir[rel] = p
		a.byName[p.name] = append(a.byName[p.name], p)
		a.byPath[p.path] = p
		for name := range p.tests {
			a.tests[name] = append(a.tests[name], rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"client", "internal/origin", "cmd/mcpcall", "otel", "bench/sdkcompare"} {
		if a.byDir[want] == nil {
			t.Fatalf("package directory %s not found: the walk of the repository is broken", want)
		}
	}
	loaded = a
	return a
}

func importPath(modules map[string]string, rel string) string {
	for dir := rel; ; dir = filepath.ToSlash(filepath.Dir(dir)) {
		if mod, ok := modules[dir]; ok {
			if dir == rel {
				return mod
			}
			if dir == "." {
				return mod + "/" + rel
			}
			return mod + "/" + strings.TrimPrefix(rel, dir+"/")
		}
		if dir == "." {
			return rel
		}
	}
}

func parsePackage(t *testing.T, dir, rel string) *pkgAPI {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		return nil
	}
	p := &pkgAPI{dir: rel, decls: map[string]*declInfo{}, tests: map[string]bool{},
		methods: map[string]map[string]bool{}, imports: map[string]string{}, fset: token.NewFileSet()}
	for _, name := range names {
		test := strings.HasSuffix(name, "_test.go")
		mode := parser.SkipObjectResolution
		if !test {
			mode |= parser.ParseComments
		}
		f, err := parser.ParseFile(p.fset, name, nil, mode)
		if err != nil {
			t.Fatal(err)
		}
		if test {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && testFunc.MatchString(fd.Name.Name) {
					p.tests[fd.Name.Name] = true
				}
			}
			continue
		}
		p.files++
		if p.name == "" || filepath.Base(name) == "doc.go" {
			p.name = f.Name.Name
		}
		if f.Doc != nil {
			p.docFiles = append(p.docFiles, f)
		}
		p.comments = append(p.comments, f.Comments...)
		imports := fileImports(f)
		for n, path := range imports {
			p.imports[n] = path
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					if d.Name.IsExported() {
						p.decls[d.Name.Name] = &declInfo{imports: imports}
					}
					continue
				}
				recv := receiverName(d.Recv.List[0].Type)
				if p.methods[recv] == nil {
					p.methods[recv] = map[string]bool{}
				}
				p.methods[recv][d.Name.Name] = true
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch spec := spec.(type) {
					case *ast.TypeSpec:
						p.decls[spec.Name.Name] = &declInfo{spec: spec, imports: imports}
					case *ast.ValueSpec:
						for _, n := range spec.Names {
							if n.IsExported() {
								p.decls[n.Name] = &declInfo{imports: imports}
							}
						}
					}
				}
			}
		}
	}
	if p.name == "" {
		p.name = filepath.Base(dir) // a directory of tests only
	}
	return p
}

func fileImports(f *ast.File) map[string]string {
	m := map[string]string{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := filepath.Base(path)
		if v := strings.TrimPrefix(name, "v"); v != name && v != "" && strings.Trim(v, "0123456789") == "" {
			name = filepath.Base(filepath.Dir(path)) // github.com/x/y/v3
		}
		name = strings.TrimPrefix(strings.TrimPrefix(name, "go-"), "go.")
		if imp.Name != nil {
			name = imp.Name.Name
		}
		m[name] = path
	}
	return m
}

func receiverName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// hasMember reports whether the type typ of p has a method or field named
// member, its own or promoted from an embedded type.
func (a *api) hasMember(p *pkgAPI, typ, member string, depth int) bool {
	if depth > 5 {
		return false
	}
	for m := range p.methods[typ] {
		if matches(m, member) {
			return true
		}
	}
	d := p.decls[typ]
	if d == nil || d.spec == nil {
		return false
	}
	var embedded []ast.Expr
	switch x := d.spec.Type.(type) {
	case *ast.StructType:
		for _, f := range x.Fields.List {
			if len(f.Names) == 0 {
				embedded = append(embedded, f.Type)
			}
			for _, n := range f.Names {
				if matches(n.Name, member) {
					return true
				}
			}
		}
	case *ast.InterfaceType:
		for _, f := range x.Methods.List {
			if len(f.Names) == 0 {
				embedded = append(embedded, f.Type)
			}
			for _, n := range f.Names {
				if matches(n.Name, member) {
					return true
				}
			}
		}
	default:
		embedded = append(embedded, x) // type T U, type T = U
	}
	for _, e := range embedded {
		for {
			if s, ok := e.(*ast.StarExpr); ok {
				e = s.X
				continue
			}
			break
		}
		switch x := e.(type) {
		case *ast.Ident:
			if matches(x.Name, member) {
				return true
			}
			if a.hasMember(p, x.Name, member, depth+1) {
				return true
			}
		case *ast.SelectorExpr:
			if matches(x.Sel.Name, member) {
				return true
			}
			if id, ok := x.X.(*ast.Ident); ok {
				if q := a.byPath[d.imports[id.Name]]; q != nil && a.hasMember(q, x.Sel.Name, member, depth+1) {
					return true
				}
			}
		}
	}
	return false
}

// matches reports whether name is want, or starts with it when want ends
// in "*".
func matches(name, want string) bool {
	if prefix, ok := strings.CutSuffix(want, "*"); ok {
		return strings.HasPrefix(name, prefix)
	}
	return name == want
}

// lookup finds the exported declaration or test of p that name (perhaps
// ending in "*") names.
func (p *pkgAPI) lookup(name string) (d *declInfo, found bool) {
	if _, ok := strings.CutSuffix(name, "*"); !ok {
		d = p.decls[name]
		return d, d != nil || p.tests[name]
	}
	for n, d := range p.decls {
		if matches(n, name) {
			return d, true
		}
	}
	for n := range p.tests {
		if matches(n, name) {
			return nil, true
		}
	}
	return nil, false
}

// resolve says what is wrong with the name q.name(.member) in the packages
// pkgs (candidates for q), or "" when it names part of their API.
func (a *api) resolve(q string, pkgs []*pkgAPI, name, member string) string {
	var why string
	for _, p := range pkgs {
		d, found := p.lookup(name)
		switch {
		case !found:
			why = fmt.Sprintf("package %s (%s) has no exported %s", p.name, p.dir, name)
		case member == "":
			return ""
		case d == nil || d.spec == nil:
			return "" // a function or a value: what follows is not checked
		case a.hasMember(p, name, member, 0):
			return ""
		default:
			why = fmt.Sprintf("type %s of package %s (%s) has no method or field %s", name, p.name, p.dir, member)
		}
	}
	if member == "" {
		if where := a.whereIs(name); where != "" {
			why += "; found: " + where
		}
	}
	return why
}

// whereIs names the directories of the packages that export name, and the
// types that have a method of that name (dir.Type.Method).
func (a *api) whereIs(name string) string {
	var dirs []string
	for _, p := range a.pkgs {
		if _, found := p.lookup(name); found {
			dirs = append(dirs, p.dir)
		}
		for typ, methods := range p.methods {
			if methods[name] && ast.IsExported(typ) {
				dirs = append(dirs, p.dir+"."+typ+"."+name)
			}
		}
	}
	sort.Strings(dirs)
	return strings.Join(dirs, ", ")
}

// A reference: `client.Dial`, `fleet.Tool.Raw`, `internal/origin.FuzzCheck`,
// `github.com/anymcp/anymcp/client.Conn`.
var qualifiedRef = regexp.MustCompile(`((?:[a-z][\w-]*/)*[a-z]\w*)\.([A-Z]\w*)(?:\.([A-Z]\w*))?`)

// A test named alone: `TestDialCrossOrigin`, `FuzzCheck`.
var bareTestRef = regexp.MustCompile(`\b(?:Test|Fuzz|Benchmark|Example)[A-Z_0-9]\w*`)

const modulePrefix = "github.com/anymcp/anymcp/"

type ref struct {
	line            int
	text            string // as written
	q, name, member string // name or member ends in * for a prefix
}

// refsIn finds the qualified names in s, a code span or a line of code.
func refsIn(s string, line int) []ref {
	var refs []ref
	for _, m := range qualifiedRef.FindAllStringSubmatchIndex(s, -1) {
		start := m[0]
		if start > 0 && strings.ContainsRune("./-_", rune(s[start-1])) {
			continue // inside a longer path or name: github.com/x/y.Z, a.b.C
		}
		if start > 0 && isWordByte(s[start-1]) {
			continue
		}
		if m[1] < len(s) && isWordByte(s[m[1]]) {
			continue
		}
		r := ref{line: line, text: s[m[0]:m[1]], q: s[m[2]:m[3]], name: s[m[4]:m[5]]}
		if m[6] >= 0 {
			r.member = s[m[6]:m[7]]
		}
		if m[1] < len(s) && s[m[1]] == '*' { // `mcp.Meta*`: some name starts so
			r.text += "*"
			if r.member == "" {
				r.name += "*"
			} else {
				r.member += "*"
			}
		}
		refs = append(refs, r)
	}
	for i := strings.Index(s, modulePrefix); i >= 0; {
		rest := s[i+len(modulePrefix):]
		if m := qualifiedRef.FindStringSubmatch(rest); m != nil && strings.HasPrefix(rest, m[0]) {
			refs = append(refs, ref{line: line, text: modulePrefix + m[0], q: m[1], name: m[2], member: m[3]})
		}
		j := strings.Index(rest, modulePrefix)
		if j < 0 {
			break
		}
		i += len(modulePrefix) + j
	}
	return refs
}

func isWordByte(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// markdownCode returns, line by line, the code of a Markdown file: its
// inline code spans and the lines of its Go (or unlabelled) fenced blocks,
// and the variables those blocks declare. The first column of a table whose
// header starts "| old |" (docs/migration.md) names what is gone, on
// purpose, and is left out.
func markdownCode(md []byte) (code map[int][]string, locals map[string]bool) {
	code, locals = map[int][]string{}, map[string]bool{}
	fence, goFence, oldTable := "", false, false
	for i, l := range strings.Split(string(md), "\n") {
		trimmed := strings.TrimSpace(l)
		if fence == "" {
			switch {
			case !strings.HasPrefix(trimmed, "|"):
				oldTable = false
			case oldHeader.MatchString(trimmed):
				oldTable = true
				continue
			case oldTable:
				l = oldCell.ReplaceAllString(trimmed, "|")
			}
		}
		if fence == "" && strings.HasPrefix(trimmed, "```") {
			fence = "```"
			info := strings.TrimSpace(strings.TrimPrefix(trimmed, "```"))
			goFence = info == "" || info == "go"
			continue
		}
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
				continue
			}
			if goFence {
				code[i+1] = append(code[i+1], l)
				for _, v := range declared(l) {
					locals[v] = true
				}
			}
			continue
		}
		for _, m := range codeSpan.FindAllStringSubmatch(l, -1) {
			code[i+1] = append(code[i+1], m[1])
		}
	}
	return code, locals
}

var (
	codeSpan  = regexp.MustCompile("`([^`]+)`")
	oldHeader = regexp.MustCompile(`^\|\s*old\s*\|`)
	oldCell   = regexp.MustCompile(`^\|[^|]*\|`) // a cell holds no '|' of its own: TestTableCells
)

var (
	shortDecl = regexp.MustCompile(`^\s*([\w\s,]+?)\s*:?=`)
	rangeDecl = regexp.MustCompile(`for\s+([\w\s,]+?)\s*:=\s*range`)
	funcParam = regexp.MustCompile(`func\s*\(([^)]*)\)`)
)

// declared returns the names a line of Go declares: a, b := ...; var a;
// for _, x := range; func(x T).
func declared(l string) []string {
	var names []string
	add := func(list string) {
		for _, part := range strings.Split(list, ",") {
			if f := strings.Fields(part); len(f) > 0 {
				names = append(names, f[0])
			}
		}
	}
	if m := shortDecl.FindStringSubmatch(l); m != nil {
		add(strings.TrimPrefix(strings.TrimSpace(m[1]), "var "))
	}
	if m := rangeDecl.FindStringSubmatch(l); m != nil {
		add(m[1])
	}
	for _, m := range funcParam.FindAllStringSubmatch(l, -1) {
		add(m[1])
	}
	return names
}

// TestDocsNameRealAPI: every Go name the guides, README.md and SECURITY.md
// write in code (`client.Dial`, `fleet.Tool.Raw`, `internal/origin.FuzzCheck`,
// `TestSameOrigin`) exists in the repository, so a rename or a move that
// the docs missed fails here with the file, the line and the name.
func TestDocsNameRealAPI(t *testing.T) {
	a := loadAPI(t)
	codes := map[string]map[int][]string{}
	locals := map[string]bool{}
	files := markdownFiles(t)
	for _, name := range files {
		code, l := markdownCode(read(t, name))
		codes[name] = code
		for v := range l {
			locals[v] = true
		}
	}
	checked := 0
	for _, name := range files {
		problems, n := a.checkMarkdown(name, codes[name], locals)
		checked += n
		for _, p := range problems {
			t.Error(p)
		}
	}
	if checked < 300 {
		t.Fatalf("checked %d names in the docs, want at least 300: the scan of code spans is broken", checked)
	}
}

// checkMarkdown checks the code of one Markdown file; it returns a line
// "file:line: `name`: why" for each name that is not there, and how many
// names it checked.
func (a *api) checkMarkdown(file string, code map[int][]string, locals map[string]bool) (problems []string, checked int) {
	lines := make([]int, 0, len(code))
	for n := range code {
		lines = append(lines, n)
	}
	slices.Sort(lines)
	for _, n := range lines {
		for _, span := range code[n] {
			for _, r := range refsIn(span, n) {
				why, ok := a.markdownRef(r, locals)
				if !ok {
					continue
				}
				checked++
				if why != "" {
					problems = append(problems, fmt.Sprintf("%s:%d: `%s`: %s", file, n, r.text, why))
				}
			}
			for _, m := range bareTestRef.FindAllStringIndex(span, -1) {
				if m[0] > 0 && span[m[0]-1] == '.' {
					continue // qualified, checked above
				}
				name := span[m[0]:m[1]]
				checked++
				if len(a.tests[name]) == 0 && !(strings.Contains(span, "-run") && a.testPrefix(name)) {
					problems = append(problems, fmt.Sprintf("%s:%d: `%s`: no test, fuzz target, benchmark or example of that name in any _test.go file", file, n, name))
				}
			}
		}
	}
	return problems, checked
}

// TestDocsNameRealAPIFindsStale: the check of TestDocsNameRealAPI fails on
// stale names, each with its line, and passes the live ones around them.
func TestDocsNameRealAPIFindsStale(t *testing.T) {
	a := loadAPI(t)
	md := "Call `client.Dial`, then `client.Conn.Close`; `fleet.Tool.Raw`, `github.com/anymcp/anymcp/client.Conn`.\n" + // 1: live
		"Call `client.Dail` and `client.Conn.Clsoe`, `github.com/anymcp/anymcp/client.Dail`.\n" + // 2: typos
		"Fuzzed by `modern.FuzzEncodeHeaderValue` and `internal/reqmeta.FuzzEncodeHeaderValue`.\n" + // 3: moved, then right
		"`oldpkg.Hook`, `internal/gone.X`, `http.Client`, `conn.Close`, `mcp.Meta*`, `mcp.Nope*`.\n" + // 4
		"`TestSameOrigin`, `TestNoSuchThing`, `go test -run TestFlood ./client/`.\n" + // 5
		"| old | new |\n|---|---|\n| `client.Gone` | `client.Dial` |\n| `client.Gone` | `client.Gone2` |\n" + // 6-9
		"```go\nconn, err := client.Dial(ctx, client.URL(u))\nx := otelmcp.Observe\ny := otelmcp.Nope\n```\n" // 10-14
	code, locals := markdownCode([]byte(md))
	got, checked := a.checkMarkdown("x.md", code, locals)
	want := []string{
		"x.md:2: `client.Dail`: package client (client) has no exported Dail",
		"x.md:2: `client.Conn.Clsoe`: type Conn of package client (client) has no method or field Clsoe",
		"x.md:2: `github.com/anymcp/anymcp/client.Dail`: package client (client) has no exported Dail",
		"x.md:3: `modern.FuzzEncodeHeaderValue`: package modern (modern) has no exported FuzzEncodeHeaderValue; found: internal/reqmeta",
		"x.md:4: `oldpkg.Hook`: oldpkg is no package of this repository; if it is another library's, add it to foreign in internal/docs/refs_test.go",
		"x.md:4: `internal/gone.X`: no package directory internal/gone in the repository",
		"x.md:4: `mcp.Nope*`: package mcp (mcp) has no exported Nope*",
		"x.md:5: `TestNoSuchThing`: no test, fuzz target, benchmark or example of that name in any _test.go file",
		"x.md:9: `client.Gone2`: package client (client) has no exported Gone2",
		"x.md:13: `otelmcp.Nope`: package otelmcp (otel) has no exported Nope",
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if checked != 22 {
		t.Errorf("checked %d names, want 22", checked)
	}
}

// markdownRef checks one reference of a Markdown file; ok is false when it
// names something outside the repository.
func (a *api) markdownRef(r ref, locals map[string]bool) (why string, ok bool) {
	full := r.q + "." + r.name
	if r.member != "" {
		full += "." + r.member
	}
	if _, ok := sameNameForeign[full]; ok {
		return "", false
	}
	if _, ok := sameNameForeign[r.q+"."+r.name]; ok {
		return "", false
	}
	if strings.Contains(r.q, "/") {
		p := a.byDir[r.q]
		if p == nil {
			if foreign[r.q] {
				return "", false
			}
			return fmt.Sprintf("no package directory %s in the repository", r.q), true
		}
		return a.resolve(r.q, []*pkgAPI{p}, r.name, r.member), true
	}
	pkgs := a.byName[r.q]
	if len(pkgs) == 0 {
		if foreign[r.q] || locals[r.q] || exampleLocals[r.q] || len(r.q) == 1 {
			return "", false
		}
		return fmt.Sprintf("%s is no package of this repository; if it is another library's, add it to foreign in internal/docs/refs_test.go", r.q), true
	}
	return a.resolve(r.q, a.preferred(r.q, pkgs), r.name, r.member), true
}

// preferred puts the package whose directory is q (client, not
// conformance/client) first, and alone when there is one.
func (a *api) preferred(q string, pkgs []*pkgAPI) []*pkgAPI {
	if p := a.byDir[q]; p != nil && p.name == q {
		return []*pkgAPI{p}
	}
	return pkgs
}

// testPrefix reports whether some test starts with prefix, as the pattern of
// `go test -run TestFlood` matches TestFloodMemory.
func (a *api) testPrefix(prefix string) bool {
	for name := range a.tests {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}

// A Go doc link: [Name], [Name.Method], [pkg.Name], [*pkg.Name],
// [path/to/pkg.Name.Method].
var (
	docLink = regexp.MustCompile(`\[\*?([\w./-]+)\]`)
	goName  = regexp.MustCompile(`^(?:[\w.-]+/)*\w+(?:\.[A-Za-z_]\w*){0,2}$`)
)

// TestPackageDocsNameRealAPI: the package comment of every package, in
// every module, names only what exists: its doc links ([Conn.Call],
// [client.Dial]) and the repository's names it writes out (client.Dial).
func TestPackageDocsNameRealAPI(t *testing.T) {
	a := loadAPI(t)
	checked := 0
	for _, p := range a.pkgs {
		problems, n := a.checkPackageDoc(p)
		checked += n
		for _, problem := range problems {
			t.Error(problem)
		}
	}
	t.Logf("checked %d names in package docs", checked)
	if checked < 50 {
		t.Fatalf("checked %d names in package docs, want at least 50: the scan is broken", checked)
	}
}

// TestCommentsNameRealAPI: every comment in the Go code of every module
// names only the repository's names that exist, written out (client.Dial)
// or as doc links to other packages ([negotiate.Report]). A link to the
// package's own [Name] is checked in package docs only: elsewhere Go reads
// an unknown one as text ([REDACTED]).
func TestCommentsNameRealAPI(t *testing.T) {
	a := loadAPI(t)
	checked := 0
	for _, p := range a.pkgs {
		problems, n := a.checkComments(p, p.comments, false)
		checked += n
		for _, problem := range problems {
			t.Error(problem)
		}
	}
	if checked < 200 {
		t.Fatalf("checked %d names in comments, want at least 200: the scan is broken", checked)
	}
}

// checkPackageDoc checks the package comments of p.
func (a *api) checkPackageDoc(p *pkgAPI) (problems []string, checked int) {
	var groups []*ast.CommentGroup
	for _, f := range p.docFiles {
		groups = append(groups, f.Doc)
	}
	return a.checkComments(p, groups, true)
}

// checkComments checks the names in comments of p; ownLinks says whether a
// doc link to p's own [Name] or [Type.Method] must resolve.
func (a *api) checkComments(p *pkgAPI, groups []*ast.CommentGroup, ownLinks bool) (problems []string, checked int) {
	for _, g := range groups {
		for _, c := range g.List {
			pos := p.fset.Position(c.Slash)
			file := relDir(pos.Filename)
			for i, line := range strings.Split(c.Text, "\n") {
				seen := map[string]bool{}
				for _, m := range docLink.FindAllStringSubmatchIndex(line, -1) {
					if m[1] < len(line) && (line[m[1]] == ':' || line[m[1]] == '(') {
						continue // a link definition or a Markdown-style link
					}
					link := line[m[2]:m[3]]
					seen[link] = true
					var why string
					switch parts := strings.Split(link, "."); {
					case !goName.MatchString(link):
						continue // not a name: [A-Z], [link text]
					case ast.IsExported(parts[0]) && len(parts) <= 2: // [Name], [Type.Method]
						if !ownLinks {
							continue
						}
						member := ""
						if len(parts) == 2 {
							member = parts[1]
						}
						why = a.resolve(p.name, []*pkgAPI{p}, parts[0], member)
					default:
						refs := refsIn(link, pos.Line+i)
						if len(refs) != 1 || refs[0].text != link && refs[0].text != modulePrefix+link {
							continue // not a name: [link text], [1]
						}
						pkgs := a.docQualifier(p, refs[0].q)
						if pkgs == nil {
							continue
						}
						why = a.resolve(refs[0].q, pkgs, refs[0].name, refs[0].member)
					}
					checked++
					if why != "" {
						problems = append(problems, fmt.Sprintf("%s:%d: [%s]: %s", file, pos.Line+i, link, why))
					}
				}
				for _, r := range refsIn(line, pos.Line+i) {
					if seen[r.text] {
						continue
					}
					pkgs := a.docQualifier(p, r.q)
					if pkgs == nil {
						continue
					}
					checked++
					if why := a.resolve(r.q, pkgs, r.name, r.member); why != "" {
						problems = append(problems, fmt.Sprintf("%s:%d: %s: %s", file, pos.Line+i, r.text, why))
					}
				}
			}
		}
	}
	return problems, checked
}

// docQualifier finds the repository's packages that q means in a comment
// of p: the package p imports as q, else the packages named q. It returns
// nil for anything else (another library, a variable).
func (a *api) docQualifier(p *pkgAPI, q string) []*pkgAPI {
	if strings.Contains(q, "/") {
		if d := a.byDir[q]; d != nil {
			return []*pkgAPI{d}
		}
		if d := a.byPath[q]; d != nil {
			return []*pkgAPI{d}
		}
		return nil
	}
	if path, ok := p.imports[q]; ok {
		if d := a.byPath[path]; d != nil {
			return []*pkgAPI{d}
		}
		return nil
	}
	if q == p.name {
		return []*pkgAPI{p}
	}
	if pkgs := a.byName[q]; len(pkgs) > 0 && q != "main" {
		return a.preferred(q, pkgs)
	}
	return nil
}

// TestCommentsNameRealAPIFindsStale: the check of Go comments fails on
// stale names, each with its line, and passes the live ones and other
// libraries' names around them.
func TestCommentsNameRealAPIFindsStale(t *testing.T) {
	a := loadAPI(t)
	src := `// Package x uses [client.Dial], client.Conn.Close and [Own.Method].
// It names [client.Dail], [Own.Gone], [Gone] and negotiate.NoSuchName.
// [REDACTED], [1], http.Client and mcp.Nope from go-sdk are not ours.
package x

import (
	"net/http"

	"github.com/anymcp/anymcp/client"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Own is a type.
type Own struct{}

// Method is a method.
func (Own) Method() {}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x/doc.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	p := &pkgAPI{dir: "x", name: "x", fset: fset, docFiles: []*ast.File{f}, comments: f.Comments,
		decls: map[string]*declInfo{}, tests: map[string]bool{}, methods: map[string]map[string]bool{"Own": {"Method": true}},
		imports: fileImports(f)}
	p.decls["Own"] = &declInfo{spec: f.Decls[1].(*ast.GenDecl).Specs[0].(*ast.TypeSpec), imports: p.imports}
	check := func(got []string, want ...string) {
		t.Helper()
		for i := range got {
			got[i] = strings.TrimPrefix(got[i], relDir("x/doc.go"))
		}
		if !slices.Equal(got, want) {
			t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	stale := []string{
		":2: [client.Dail]: package client (client) has no exported Dail",
		":2: negotiate.NoSuchName: package negotiate (negotiate) has no exported NoSuchName",
	}
	all, _ := a.checkComments(p, f.Comments, false)
	check(all, stale...)
	pkgDoc, _ := a.checkPackageDoc(p)
	check(pkgDoc, stale[0],
		":2: [Own.Gone]: type Own of package x (x) has no method or field Gone",
		":2: [Gone]: package x (x) has no exported Gone",
		stale[1],
		":3: [REDACTED]: package x (x) has no exported REDACTED")
}

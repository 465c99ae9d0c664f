package errtext

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// transportWords are the identifiers and file names outside the packages
// modern and legacy in which "modern" or "legacy" names a transport
// (Streamable HTTP, HTTP+SSE), not an era. A new one is added here by
// someone who checked that it names the transport; an era is "stateless"
// or "initialize".
var transportWords = map[string]bool{
	// HTTP+SSE servers and their tests (testservers, bridge, client, auth).
	"LegacyOptions": true, "LegacyServer": true, "StartLegacy": true, "StartLegacyTLS": true,
	"ExampleStartLegacy": true, "GETServesLegacy": true, "Legacy": true, "legacyHandler": true,
	"newLegacyHandler": true, "legacySession": true, "legacyWire": true, "dialLegacy": true,
	"newLegacyClient": true, "startLegacy": true, "legacyServer": true, "legacySrv": true,
	"legacyStreams": true, "serveLegacyPost": true, "serveLegacyStream": true, "serveLegacy": true,
	"legacyProbe": true, "legacyTx": true, "modernOptions": true,
	"TestStatusGETServesLegacy": true, "TestStatusLegacyOnly": true, "TestLegacySSEClient": true,
	"TestLegacyTransport": true, "TestLegacyStreamLossFailsPendingCallsAndRecovers": true,
	"BenchmarkNegotiateLegacyCached": true, "BenchmarkNegotiateLegacyCold": true,
	// Files of the HTTP+SSE server and face.
	"legacy.go": true, "legacy_test.go": true, "faults_legacy_test.go": true,
	"legacy_cross_origin_endpoint.golden": true,
}

// transportTests are the prefixes of the test servers' HTTP+SSE tests.
var transportTests = regexp.MustCompile(`^TestLegacy(CloseWithOpenStreams|ConcurrentSessions|Endpoint|Fault|ForeignOrigin|Handshake|KillStreams|NotifyOutsideRequests|OptionKnobs|Refusals|ServerRequest|SessionEndsWithStream|Versions)`)

var oldWord = regexp.MustCompile(`(?i)modern|legacy`)

// oldEraName reports whether name (an identifier or a file's base name)
// carries "modern" or "legacy" without naming a transport: the bare
// words are the packages' names (or a transport held in a variable) and
// pass.
func oldEraName(name string) bool {
	if name == "modern" || name == "legacy" || !oldWord.MatchString(name) {
		return false
	}
	return !transportWords[name] && !transportTests.MatchString(name)
}

// TestNoOldEraIdentifiers parses every .go file (tests included) of the
// module and mcpcall, but the packages modern and legacy, and fails on an
// identifier or a file name that names an era "modern" or "legacy"
// (eraModern, Eras.modern, ModernToolNames, tools_modern.go). A selector
// on the packages modern and legacy passes (modern.Options), and so do
// declarations marked Deprecated (the old names kept as aliases).
func TestNoOldEraIdentifiers(t *testing.T) {
	dirs, _ := packages(t)
	fset := token.NewFileSet()
	type use struct{ pos, name string }
	var uses []use
	deprecated := map[string]bool{}
	files := 0
	for _, dir := range dirs {
		if dir == "modern" || dir == "legacy" {
			continue
		}
		paths, _ := filepath.Glob(filepath.Join(root, dir, "*"))
		for _, p := range paths {
			if oldEraName(filepath.Base(p)) {
				t.Errorf("%s: file name names an era by a transport's name", p)
			}
			if !strings.HasSuffix(p, ".go") {
				continue
			}
			files++
			af, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			markDeprecated(af, deprecated)
			ast.Inspect(af, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.ImportSpec:
					return false
				case *ast.SelectorExpr:
					if x, ok := n.X.(*ast.Ident); ok && (x.Name == "modern" || x.Name == "legacy") {
						return false
					}
				case *ast.Ident:
					if oldEraName(n.Name) {
						uses = append(uses, use{fset.Position(n.Pos()).String(), n.Name})
					}
				}
				return true
			})
		}
	}
	for _, u := range uses {
		if !deprecated[u.name] {
			t.Errorf("%s: identifier %s names an era by a transport's name (say stateless or initialize)", u.pos, u.name)
		}
	}
	if files < 300 {
		t.Fatalf("checked %d files: not the module's", files)
	}
}

// markDeprecated adds to m the names declared in af whose doc comment
// says Deprecated.
func markDeprecated(af *ast.File, m map[string]bool) {
	isDep := func(groups ...*ast.CommentGroup) bool {
		for _, g := range groups {
			if g != nil && strings.Contains(g.Text(), "Deprecated:") {
				return true
			}
		}
		return false
	}
	for _, d := range af.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if isDep(d.Doc) {
				m[d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.ValueSpec:
					if isDep(d.Doc, s.Doc) {
						for _, n := range s.Names {
							m[n.Name] = true
						}
					}
				case *ast.TypeSpec:
					if isDep(d.Doc, s.Doc) {
						m[s.Name.Name] = true
					}
				}
			}
		}
	}
}

// TestNoPackageIdentInErrors fails on an error text of the module's
// non-test code that names a Go identifier of one of its packages
// ("give client.URL or client.Command"): errors name protocols, methods
// and transports, never Go packages. An error text is any string literal
// in the arguments of errors.New, fmt.Errorf and a NewError, or in the
// body of an Error() string method.
func TestNoPackageIdentInErrors(t *testing.T) {
	dirs, names := packages(t)
	pkgIdent := packageIdent(names)
	fset := token.NewFileSet()
	checked := 0
	for _, dir := range dirs {
		files, _ := filepath.Glob(filepath.Join(root, dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, lit := range errorLiterals(af) {
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					continue
				}
				checked++
				if m := pkgIdent.FindString(s); m != "" {
					t.Errorf("%s: names the Go identifier %s: %q", fset.Position(lit.Pos()), m, s)
				}
			}
		}
	}
	if checked < 300 {
		t.Fatalf("checked %d literals: not the module's", checked)
	}
}

// errorLiterals returns the string literals of af's error texts.
func errorLiterals(af *ast.File) []*ast.BasicLit {
	var out []*ast.BasicLit
	collect := func(n ast.Node) {
		ast.Inspect(n, func(m ast.Node) bool {
			if lit, ok := m.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				out = append(out, lit)
			}
			return true
		})
	}
	ast.Inspect(af, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if isCall(n, "errors", "New") || isCall(n, "fmt", "Errorf") || isNewError(n) {
				for _, a := range n.Args {
					collect(a)
				}
			}
		case *ast.FuncDecl:
			if isErrorMethod(n) {
				collect(n.Body)
				return false
			}
		}
		return true
	})
	return out
}

// isNewError reports whether c calls a function named NewError.
func isNewError(c *ast.CallExpr) bool {
	switch f := c.Fun.(type) {
	case *ast.Ident:
		return f.Name == "NewError"
	case *ast.SelectorExpr:
		return f.Sel.Name == "NewError"
	}
	return false
}

// packageIdent matches "pkg.Ident", pkg one of names and Ident exported.
func packageIdent(names map[string]bool) *regexp.Regexp {
	var alts []string
	for n := range names {
		alts = append(alts, regexp.QuoteMeta(n))
	}
	return regexp.MustCompile(`\b(` + strings.Join(alts, "|") + `)\.[A-Z][A-Za-z0-9]*\b`)
}

// TestOldEraNamesCaught: the rules catch each old name this repository
// had, and let the transports' names pass.
func TestOldEraNamesCaught(t *testing.T) {
	for _, s := range []string{"eraModern", "eraLegacy", "ModernToolNames", "ModernInitialize", "legacyTask",
		"TestTaskLegacyCancel", "TestStdioLegacyProbe", "TestModernListen", "tools_modern.go", "tasks_legacy.go",
		"modern_http.go", "modern_test.go"} {
		if !oldEraName(s) {
			t.Errorf("not caught: %s", s)
		}
	}
	for _, s := range []string{"modern", "legacy", "StartLegacy", "LegacyOptions", "TestLegacyHandshake",
		"legacy.go", "StatelessToolNames", "eraInitialize"} {
		if oldEraName(s) {
			t.Errorf("caught: %s", s)
		}
	}
	re := packageIdent(map[string]bool{"client": true, "negotiate": true, "mcp": true})
	for _, s := range []string{"no target: give client.URL or client.Command", "client.WithEra(negotiate.InitializeOnly)"} {
		if !re.MatchString(s) {
			t.Errorf("not caught: %q", s)
		}
	}
	for _, s := range []string{"no target: give a URL or a command", "io.modelcontextprotocol/protocolVersion", "mcp.json", "see mcpcall.toml"} {
		if re.MatchString(s) {
			t.Errorf("caught: %q", s)
		}
	}
}

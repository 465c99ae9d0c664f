package errtext

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// oldEraWords are the ways a text named an era by a transport's package
// name ("modern" is Streamable HTTP of every revision from 2025-03-26,
// "legacy" is HTTP+SSE): "modern era", "legacy-era", "era modern",
// "--era legacy", and the report's JSON value "era": "modern".
var oldEraWords = regexp.MustCompile(`(?i)\b(modern|legacy)[ -]eras?\b|\beras?"?[ :=]+"?(modern|legacy)\b|--era[ =](modern|legacy)\b`)

// TestNoOldEraWords fails on a string literal of the module's non-test
// code, or a line of mcpcall's golden outputs (the report, as text and
// JSON), that names an era "modern" or "legacy". The eras are "stateless"
// and "initialize"; the old words survive only as accepted aliases of
// --era, in allowed.
func TestNoOldEraWords(t *testing.T) {
	dirs, _ := packages(t)
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
			ast.Inspect(af, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					return true
				}
				checked++
				if oldEraWords.MatchString(s) {
					t.Errorf("%s: names an era by a transport's name: %q", fset.Position(lit.Pos()), s)
				}
				return true
			})
		}
	}
	goldens, _ := filepath.Glob(filepath.Join(root, "cmd", "mcpcall", "testdata", "*.golden"))
	for _, g := range goldens {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			checked++
			if oldEraWords.MatchString(line) {
				t.Errorf("%s:%d: names an era by a transport's name: %s", g, i+1, line)
			}
		}
	}
	if len(goldens) < 3 || checked < 1000 {
		t.Fatalf("checked %d texts in %d goldens: not the module's", checked, len(goldens))
	}
}

// TestOldEraWordsPattern: the pattern catches each old form and lets the
// transports' own names pass.
func TestOldEraWordsPattern(t *testing.T) {
	for _, s := range []string{"using streamable-http, legacy era", "the modern era", `"era": "modern"`, "era           legacy", "--era legacy connects", "legacy-era server"} {
		if !oldEraWords.MatchString(s) {
			t.Errorf("not caught: %q", s)
		}
	}
	for _, s := range []string{"using streamable-http, initialize era", `"era": "stateless"`, "modern (Streamable HTTP)", "legacy (HTTP+SSE) transport", "--era initialize", "eraPolicy"} {
		if oldEraWords.MatchString(s) {
			t.Errorf("caught: %q", s)
		}
	}
}

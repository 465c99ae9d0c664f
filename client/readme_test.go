package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"log"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

// The README's Quick start, as a test: the body below, after its first
// two statements (the test server that stands in for the README's URL),
// is the body of the README's main, statement for statement
// (TestReadmeQuickStart checks it).
func Example_quickStart() {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()

	ctx := context.Background()
	conn, err := client.Dial(ctx, client.URL(srv.URL))
	// or: client.Dial(ctx, client.Command("npx", "-y", "@modelcontextprotocol/server-everything"))
	if err != nil {
		log.Fatal(err) // nothing was called: the connection or the handshake failed
	}
	defer conn.Close()

	res, err := conn.CallTool(ctx, "echo", map[string]any{"text": "hello"},
		client.WithProgress(func(p mcp.ProgressParams) { log.Println("progress", p.Progress, p.Total) }))
	switch {
	case errors.Is(err, jsonrpc.ErrOutcomeUnknown):
		log.Fatalf("the answer was lost: the tool may have run: %v", err)
	case err != nil:
		log.Fatalf("the tool did not run: %v", err) // e.g. a *jsonrpc.Error from the server
	case res.IsError:
		log.Fatalf("the tool ran and failed: %v", res.Content)
	}
	for _, c := range res.Content {
		if c.Type == mcp.ContentText {
			fmt.Println(c.Text)
		}
	}
	fmt.Println(conn.Info().Transport, conn.Info().ProtocolVersion)
	// Output:
	// hello
	// streamable-http 2025-11-25
}

var quickStartRE = regexp.MustCompile("(?s)## Quick start\n.*?```go\n(.*?)```")

// TestReadmeQuickStart keeps the README's Quick start true: a whole
// program (package, imports, main) whose main body is Example_quickStart's
// with the test server replaced by the README's URL, and whose imports are
// the Example's but testservers.
func TestReadmeQuickStart(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := quickStartRE.FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no ```go block under ## Quick start")
	}
	fset := token.NewFileSet()
	prog, err := parser.ParseFile(fset, "README.md", m[1], parser.ParseComments)
	if err != nil {
		t.Fatalf("the Quick start is not a Go file: %v", err)
	}
	if prog.Name.Name != "main" {
		t.Errorf("the Quick start is package %s, want main", prog.Name.Name)
	}
	mainFn := findFunc(prog, "main")
	if mainFn == nil {
		t.Fatal("the Quick start has no func main")
	}

	ex, err := parser.ParseFile(fset, "readme_test.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	exFn := findFunc(ex, "Example_quickStart")
	if exFn == nil {
		t.Fatal("no Example_quickStart")
	}
	exBody := exFn.Body.List[2:] // after the test server and its Close
	urlArg := regexp.MustCompile(`client\.URL\(srv\.URL\)`)

	readmeStmts, exStmts := printStmts(t, fset, mainFn.Body.List), printStmts(t, fset, exBody)
	for i := range exStmts {
		exStmts[i] = urlArg.ReplaceAllString(exStmts[i], `client.URL("http://127.0.0.1:8080/mcp")`)
	}
	if !slices.Equal(readmeStmts, exStmts) {
		t.Errorf("the Quick start's main differs from Example_quickStart:\n--- README\n%s\n--- Example\n%s",
			strings.Join(readmeStmts, "\n"), strings.Join(exStmts, "\n"))
	}

	var want []string
	for _, imp := range ex.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if exampleUses(exFn, imp) && p != "github.com/anymcp/anymcp/testservers" {
			want = append(want, p)
		}
	}
	var got []string
	for _, imp := range prog.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		got = append(got, p)
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("the Quick start imports %v, want %v", got, want)
	}
}

func findFunc(f *ast.File, name string) *ast.FuncDecl {
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == name {
			return fn
		}
	}
	return nil
}

// printStmts prints each statement as gofmt would, comments aside.
func printStmts(t *testing.T, fset *token.FileSet, stmts []ast.Stmt) []string {
	t.Helper()
	out := make([]string, len(stmts))
	for i, s := range stmts {
		var b bytes.Buffer
		if err := format.Node(&b, fset, s); err != nil {
			t.Fatal(err)
		}
		out[i] = b.String()
	}
	return out
}

// exampleUses reports whether fn refers to the package imp imports.
func exampleUses(fn *ast.FuncDecl, imp *ast.ImportSpec) bool {
	p, _ := strconv.Unquote(imp.Path.Value)
	name := p[strings.LastIndex(p, "/")+1:]
	if imp.Name != nil {
		name = imp.Name.Name
	}
	used := false
	ast.Inspect(fn, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == name {
				used = true
			}
		}
		return !used
	})
	return used
}

package docs

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/anymcp/anymcp/internal/testkit"
)

// root is the repository root, seen from this package's directory.
const root = "../.."

const (
	maxReadmeLines     = 250 // README.md: what it is, two commands, quick start, tour, links
	commandLines       = 20  // the two commands come within README.md's first lines
	maxPackageDocLines = 60  // a package's doc comment: what it is for, how to start
	maxTableCell       = 300 // characters in one cell of a Markdown table
	maxDocCommentLines = 20  // a declaration's doc comment: what and why; the detail goes to docs/
)

// The two commands a newcomer runs first; .ci/run and hooks look for them too.
var readmeCommands = []string{"go run ./cmd/mcpcall demo", "go test -race ./..."}

func read(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// markdownFiles are the files whose links and tables are held here:
// README.md, SECURITY.md and every guide under docs/.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "SECURITY.md"}
	guides, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range guides {
		files = append(files, filepath.ToSlash(strings.TrimPrefix(g, root+string(filepath.Separator))))
	}
	return files
}

func TestReadmeShort(t *testing.T) {
	readme := read(t, "README.md")
	if n := bytes.Count(readme, []byte("\n")); n >= maxReadmeLines {
		t.Errorf("README.md has %d lines, want under %d: move the detail to a guide under docs/", n, maxReadmeLines)
	}
	lines := strings.Split(string(readme), "\n")
	first := lines[:min(commandLines, len(lines))]
	for _, cmd := range readmeCommands {
		if !slices.ContainsFunc(first, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), cmd) }) {
			t.Errorf("README.md: no line starting %q within its first %d lines", cmd, commandLines)
		}
	}
}

// TestReadmeLinksEveryGuide: every topic is one link away from README.md,
// and docs/README.md indexes every guide.
func TestReadmeLinksEveryGuide(t *testing.T) {
	guides, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(guides) == 0 {
		t.Fatal("no guides under docs/")
	}
	readme := linkTargets(read(t, "README.md"))
	index := linkTargets(read(t, "docs/README.md"))
	for _, g := range guides {
		name := filepath.Base(g)
		if !readme["docs/"+name] {
			t.Errorf("README.md does not link docs/%s", name)
		}
		if name != "README.md" && !index[name] {
			t.Errorf("docs/README.md does not link %s", name)
		}
	}
}

// linkTargets are the relative files a Markdown text links, without anchors.
func linkTargets(md []byte) map[string]bool {
	out := map[string]bool{}
	for _, l := range links(md) {
		if f, _, _ := strings.Cut(l.target, "#"); f != "" && !external(f) {
			out[f] = true
		}
	}
	return out
}

// TestLinks: every relative link of README.md, SECURITY.md and docs/*.md
// names a file or directory that exists, and an anchor names a heading of
// its file.
func TestLinks(t *testing.T) {
	for _, file := range markdownFiles(t) {
		md := read(t, file)
		for _, l := range links(md) {
			if external(l.target) {
				continue
			}
			if strings.HasPrefix(l.target, "/") {
				t.Errorf("%s:%d: link %q is absolute: keep links relative", file, l.line, l.target)
				continue
			}
			path, anchor, _ := strings.Cut(l.target, "#")
			target := file
			if path != "" {
				target = filepath.ToSlash(filepath.Join(filepath.Dir(file), path))
				if _, err := os.Stat(filepath.Join(root, target)); err != nil {
					t.Errorf("%s:%d: link %q: no such file %s", file, l.line, l.target, target)
					continue
				}
			}
			if anchor == "" {
				continue
			}
			if !strings.HasSuffix(target, ".md") {
				t.Errorf("%s:%d: link %q: an anchor into a file that is not Markdown", file, l.line, l.target)
				continue
			}
			if !anchors(read(t, target))[anchor] {
				t.Errorf("%s:%d: link %q: %s has no heading with anchor #%s", file, l.line, l.target, target, anchor)
			}
		}
	}
}

func external(target string) bool {
	return strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:")
}

type link struct {
	target string
	line   int
}

var (
	linkRE     = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	codeSpanRE = regexp.MustCompile("`[^`]*`")
)

// links are the inline links of a Markdown text outside code.
func links(md []byte) []link {
	var out []link
	for i, line := range proseLines(md) {
		for _, m := range linkRE.FindAllStringSubmatch(codeSpanRE.ReplaceAllString(line, ""), -1) {
			out = append(out, link{target: m[1], line: i + 1})
		}
	}
	return out
}

// proseLines are md's lines with those of fenced code blocks blanked.
func proseLines(md []byte) []string {
	lines := strings.Split(string(md), "\n")
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			lines[i] = ""
			continue
		}
		if fenced {
			lines[i] = ""
		}
	}
	return lines
}

// anchors are the ids GitHub gives the headings of a Markdown text:
// lowercased, punctuation but '-' and '_' dropped, spaces made '-', and a
// repeated id numbered.
func anchors(md []byte) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range proseLines(md) {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(l, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		id := b.String()
		if n := seen[id]; n > 0 {
			out[fmt.Sprintf("%s-%d", id, n)] = true
		} else {
			out[id] = true
		}
		seen[id]++
	}
	return out
}

// TestTableCells: no cell of a Markdown table is an essay.
func TestTableCells(t *testing.T) {
	for _, file := range markdownFiles(t) {
		for i, l := range proseLines(read(t, file)) {
			if !strings.HasPrefix(l, "|") {
				continue
			}
			for _, cell := range strings.Split(strings.Trim(l, "| "), " | ") {
				if n := len([]rune(strings.TrimSpace(cell))); n > maxTableCell {
					t.Errorf("%s:%d: a table cell of %d characters (at most %d): %.60q…", file, i+1, n, maxTableCell, cell)
				}
			}
		}
	}
}

// publicDirs are the directories of the packages outside internal/ of the
// modules in go.work (the library and mcpcall; bench and interop left out).
func publicDirs(t *testing.T) map[string]bool {
	t.Helper()
	dirs := map[string]bool{}
	workspace := testkit.WorkspaceModules(t, root)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "internal") {
				return filepath.SkipDir
			}
			if path != root && !workspace[path] {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // a module outside go.work (bench, interop)
				}
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			dirs[filepath.Dir(path)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"client", "mcp", "jsonrpc", "auth", "negotiate", "modern", "legacy", "stdio", "reconnect", "sse", "testservers", "cmd/mcpcall"} {
		if !dirs[filepath.Join(root, want)] {
			t.Errorf("package %s not found", want)
		}
	}
	return dirs
}

// parseDir parses the non-test Go files of dir, with their comments, by
// package name.
func parseDir(t *testing.T, dir string) (*token.FileSet, map[string][]*ast.File) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	pkgs := map[string][]*ast.File{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		pkgs[f.Name.Name] = append(pkgs[f.Name.Name], f)
	}
	return fset, pkgs
}

func relDir(dir string) string {
	return strings.TrimPrefix(filepath.ToSlash(dir), root+"/")
}

// TestPackageDocsShort: the package comment of every package, in every
// module (go.work's, bench's, interop's; internal/ too), says what the
// package is for and how to start, in under maxPackageDocLines lines; the
// rest belongs in docs/.
func TestPackageDocsShort(t *testing.T) {
	a := loadAPI(t)
	checked := 0
	for _, p := range a.pkgs {
		if p.files == 0 {
			continue // tests only
		}
		checked++
		lines := 0
		for _, f := range p.docFiles {
			lines += countLines(f.Doc.Text())
		}
		if lines == 0 {
			t.Errorf("package %s (%s) has no doc comment", p.name, p.dir)
		}
		if lines >= maxPackageDocLines {
			t.Errorf("package %s (%s): doc comment of %d lines, want under %d: move the detail to docs/", p.name, p.dir, lines, maxPackageDocLines)
		}
	}
	if checked < 40 {
		t.Fatalf("checked %d packages, want at least 40: the walk is broken", checked)
	}
}

// TestDocGoHoldsOnlyDoc: a package's doc.go holds its doc comment and the
// package clause, nothing else, in every module; code goes in a file named
// for what it holds.
func TestDocGoHoldsOnlyDoc(t *testing.T) {
	a := loadAPI(t)
	checked := 0
	for _, p := range a.pkgs {
		name := filepath.Join(root, p.dir, "doc.go")
		if _, err := os.Stat(name); err != nil {
			continue
		}
		checked++
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc == nil {
			t.Errorf("%s/doc.go has no package doc comment", p.dir)
		}
		if len(f.Decls) > 0 {
			t.Errorf("%s/doc.go holds %d declarations (imports included): move them to a file named for what they are", p.dir, len(f.Decls))
		}
	}
	if checked < 30 {
		t.Fatalf("checked %d doc.go files, want at least 30: the walk is broken", checked)
	}
}

// TestDocCommentsShort: the doc comment of an exported declaration says
// what and why in a few lines; lists of cases belong in docs/.
func TestDocCommentsShort(t *testing.T) {
	for dir := range publicDirs(t) {
		fset, pkgs := parseDir(t, dir)
		for _, files := range pkgs {
			for _, f := range files {
				check := func(name string, doc *ast.CommentGroup) {
					if doc == nil {
						return
					}
					if n := countLines(doc.Text()); n > maxDocCommentLines {
						p := fset.Position(doc.Pos())
						t.Errorf("%s:%d: the doc comment of %s is %d lines, at most %d: say what and why, move the detail to docs/",
							filepath.Join(relDir(dir), filepath.Base(p.Filename)), p.Line, name, n, maxDocCommentLines)
					}
				}
				for _, d := range f.Decls {
					switch d := d.(type) {
					case *ast.FuncDecl:
						if d.Name.IsExported() {
							check(d.Name.Name, d.Doc)
						}
					case *ast.GenDecl:
						exported := ""
						for _, spec := range d.Specs {
							switch spec := spec.(type) {
							case *ast.TypeSpec:
								if spec.Name.IsExported() {
									exported = spec.Name.Name
									check(spec.Name.Name, spec.Doc)
								}
							case *ast.ValueSpec:
								for _, n := range spec.Names {
									if n.IsExported() {
										exported = n.Name
										check(n.Name, spec.Doc)
										break
									}
								}
							}
						}
						if exported != "" {
							check(exported, d.Doc)
						}
					}
				}
			}
		}
	}
}
func countLines(s string) int {
	n := 0
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		n++
	}
	return n
}

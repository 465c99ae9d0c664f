package docs

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEveryFuzzTargetListed: docs/security.md §5 lists every fuzz target
// of the repository with the property it checks, so a new parser of
// untrusted input cannot land without saying what its fuzzing holds.
func TestEveryFuzzTargetListed(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "## 5. Fuzzing")
	if !ok {
		t.Fatal("docs/security.md has no section \"## 5. Fuzzing\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	fuzzFunc := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(`)
	found := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range fuzzFunc.FindAllStringSubmatch(string(src), -1) {
			found++
			name := m[1]
			if !regexp.MustCompile("`([A-Za-z0-9_/]+\\.)?" + name + "`").MatchString(section) {
				rel, _ := filepath.Rel(root, path)
				t.Errorf("%s: %s is not in docs/security.md §5 (add a row: the target and the property it checks)", rel, name)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found < 20 {
		t.Fatalf("found only %d fuzz targets: the walk is broken", found)
	}
}

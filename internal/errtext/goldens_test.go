package errtext

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestGoldensNameNoPackage walks what mcpcall printed on its failure paths
// (the goldens under cmd/mcpcall/testdata, which its tests compare output
// with) and fails on a line in which a message starts with "<pkg>: " (at
// the line's start, after ": " or a quote), pkg one of the module's
// packages; "over stdio: " or "of the client: " are words, not prefixes. mcpcall's own "mcpcall: " is a program's
// name, as a Unix tool prints it, and stays; a test server's stderr that a
// golden shows (testservers' crash message) is the fixture's, not ours.
func TestGoldensNameNoPackage(t *testing.T) {
	_, names := packages(t)
	delete(names, "mcpcall")
	var alts []string
	for n := range names {
		alts = append(alts, regexp.QuoteMeta(n))
	}
	prefix := regexp.MustCompile(`(?:^|: |")(` + strings.Join(alts, "|") + `): `)
	var files []string
	filepath.WalkDir(filepath.Join(root, "cmd", "mcpcall", "testdata"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".golden") {
			files = append(files, path)
		}
		return nil
	})
	lines := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			lines++
			if strings.Contains(line, "[server stderr]") || strings.Contains(line, "crashing on purpose") {
				continue
			}
			if m := prefix.FindStringSubmatch(line); m != nil {
				rel, _ := filepath.Rel(root, f)
				t.Errorf("%s:%d: names the Go package %q: %s", rel, i+1, m[1], line)
			}
		}
	}
	if len(files) < 20 || lines < 100 {
		t.Fatalf("read %d lines in %d goldens: not mcpcall's", lines, len(files))
	}
}

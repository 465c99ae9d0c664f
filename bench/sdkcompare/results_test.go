package sdkcompare_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestResultsFromRaw: RESULTS.md holds the tables run.sh prints from the
// raw output kept next to it, word for word (its "## " headings one level
// down), and names the commit that output was measured on, a clean tree:
// the file is that run, not figures typed in or left behind by a newer one.
func TestResultsFromRaw(t *testing.T) {
	raws, err := filepath.Glob("raw-*.txt")
	if err != nil || len(raws) != 1 {
		t.Fatalf("want one raw-*.txt next to RESULTS.md, found %v (%v)", raws, err)
	}
	raw, err := os.ReadFile(raws[0])
	if err != nil {
		t.Fatal(err)
	}
	results, err := os.ReadFile("RESULTS.md")
	if err != nil {
		t.Fatal(err)
	}

	m := regexp.MustCompile(`(?m)^# commit: (\S+)(.*)$`).FindSubmatch(raw)
	if m == nil {
		t.Fatalf("%s names no commit", raws[0])
	}
	if len(strings.TrimSpace(string(m[2]))) > 0 {
		t.Errorf("%s was measured on a tree with changes of its own: %q", raws[0], m[2])
	}
	if !strings.Contains(string(results), "commit `"+string(m[1])+"`") {
		t.Errorf("RESULTS.md does not name the commit %s of %s", m[1], raws[0])
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := t.TempDir()
	cmd := exec.CommandContext(ctx, "bash", "run.sh", raws[0])
	cmd.Env = append(os.Environ(), "OUT="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run.sh %s: %v\n%s", raws[0], err, b)
	}
	tables, err := os.ReadFile(filepath.Join(out, "ratios.md"))
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`(?m)^## `).ReplaceAllString(string(tables), "### ")
	if len(want) < 1000 || !strings.Contains(string(results), want) {
		t.Errorf("RESULTS.md does not hold the tables run.sh prints from %s (%d bytes)", raws[0], len(want))
	}
}

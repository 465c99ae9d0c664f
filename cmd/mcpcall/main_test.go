package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/mcpconfig"
	"github.com/anymcp/anymcp/testservers"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden with the current output")

func TestMain(m *testing.M) {
	if os.Getenv(asMCPCall) == "1" || (len(os.Args) > 2 && os.Args[1] == "demo" && os.Args[2] == demoStdioServer) {
		main() // this test binary doubles as mcpcall itself: for the tests that signal a process, and demo's stdio server
	}
	testservers.RunFromEnv() // and as the stdio test server of the tests (a test binary only; mcpcall never reads ANYMCP_TESTSERVER)
	testkit.VerifyMain(m)    // no goroutine and no child process left
}

// result is what one run of mcpcall left behind.
type result struct {
	code   int
	stdout string
	stderr string
}

// runner runs mcpcall in-process with a home and working directory of its
// own, so that no real config file is read.
type runner struct {
	t     *testing.T
	home  string
	cwd   string
	env   map[string]string // looked up before the process environment
	stdin io.Reader
	ctx   context.Context
	tty   bool // pretend stderr is a terminal
	// browser, when set, replaces the desktop's browser for auth login.
	browser func(ctx context.Context, url string) error
	// exchangeTimeout, when set, bounds auth login's code exchange.
	exchangeTimeout time.Duration
	// stderrTap, when set, also sees everything written to stderr, as it is
	// written.
	stderrTap io.Writer
	goos      string // pretend to run on this OS
	// interactive pretends stdin and stderr are a terminal, where a
	// person answers the server's questions
	interactive bool
	// probeTimeout, when set, is how long a stdio server's answer to the
	// stateless probe is waited for (the library's default, 1 s, when not)
	probeTimeout time.Duration
}

func newRunner(t *testing.T) *runner {
	t.Helper()
	dir := t.TempDir()
	r := &runner{t: t, home: filepath.Join(dir, "home"), cwd: filepath.Join(dir, "project"), env: map[string]string{}}
	for _, d := range []string{r.home, r.cwd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func (r *runner) lookup(k string) (string, bool) {
	if v, ok := r.env[k]; ok {
		return v, true
	}
	switch k {
	case "NO_COLOR", "MCPCALL_CONFIG", "XDG_CONFIG_HOME", "MCPCALL_TOKENS", "DISPLAY", "WAYLAND_DISPLAY":
		return "", false // the machine's settings must not leak into tests
	}
	return os.LookupEnv(k)
}

func (r *runner) run(args ...string) result {
	r.t.Helper()
	var stdout, stderr bytes.Buffer
	places := &mcpconfig.Places{Home: r.home, Cwd: r.cwd, GOOS: runtime.GOOS}
	if r.goos != "" {
		places.GOOS = r.goos
	}
	ctx := r.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	stdin := r.stdin
	if stdin == nil {
		stdin = strings.NewReader("")
	}
	var errw io.Writer = &stderr
	if r.stderrTap != nil {
		errw = io.MultiWriter(&stderr, r.stderrTap)
	}
	c := newCLI(stdin, &stdout, errw, r.lookup, places)
	c.stderrTTY = r.tty || r.interactive
	c.stdinTTY = r.interactive
	c.probeTimeout = r.probeTimeout
	c.openBrowser = r.browser
	c.exchangeTimeout = r.exchangeTimeout
	if c.openBrowser == nil {
		c.openBrowser = func(context.Context, string) error {
			r.t.Error("a browser was opened")
			return nil
		}
	}
	code := c.main(ctx, args)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// runOK runs mcpcall and fails the test unless it exits 0.
func (r *runner) runOK(args ...string) result {
	r.t.Helper()
	res := r.run(args...)
	if res.code != 0 {
		r.t.Fatalf("mcpcall %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), res.code, res.stdout, res.stderr)
	}
	return res
}

// writeFile writes a file under dir, making its directories.
func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// stdioTarget is the arguments that make this test binary the target,
// as a stdio server: -e for its environment, then `-- path`.
func stdioTarget(opts testservers.Options) []string {
	path, args, _ := testservers.StdioCommand()
	// A -race child sleeps a second at exit unless told not to.
	out := []string{"-e", "GORACE=atexit_sleep_ms=0"}
	for _, kv := range testservers.StdioEnv(opts) {
		out = append(out, "-e", kv)
	}
	out = append(out, "--", path)
	return append(out, args...)
}

// transportCase is one way to reach a test server.
type transportCase struct {
	name   string
	target func(t *testing.T) []string // the arguments that end the line
}

// transports are the three ways mcpcall reaches a server: Streamable
// HTTP, HTTP+SSE (found by the fallback), stdio.
var transports = []transportCase{
	{"http", func(t *testing.T) []string {
		srv := testservers.StartStreamable(testservers.HTTPOptions{})
		t.Cleanup(srv.Close)
		return []string{srv.URL}
	}},
	{"sse", func(t *testing.T) []string {
		srv := testservers.StartLegacy(testservers.LegacyOptions{})
		t.Cleanup(srv.Close)
		return []string{srv.URL}
	}},
	{"stdio", func(*testing.T) []string { return stdioTarget(testservers.Options{}) }},
}

var (
	portRE     = regexp.MustCompile(`127\.0\.0\.1:\d+`)
	durationRE = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|us|ms|s|m)\b`)
	durNsRE    = regexp.MustCompile(`"durationNs": \d+`)
	sessionRE  = regexp.MustCompile(`sessionId=[0-9a-f]+`)
	pathRE     = regexp.MustCompile(`"(/[^"\s]*/)?[^"/\s]*\.test"`)
	metaTrRE   = regexp.MustCompile(`"(transport|protocolVersion)": "[^"]*"`)
	binRE      = regexp.MustCompile(`/[^\s"]*/[^/\s"]*\.test`)
)

// normalise removes what changes from run to run: ports, durations,
// session ids.
func normalise(s string) string {
	s = portRE.ReplaceAllString(s, "127.0.0.1:PORT")
	s = durNsRE.ReplaceAllString(s, `"durationNs": 0`)
	s = durationRE.ReplaceAllString(s, "DURATION")
	s = sessionRE.ReplaceAllString(s, "sessionId=ID")
	s = binRE.ReplaceAllString(s, "TESTSERVER")
	return s
}

// normaliseMeta also hides the transport and revision, which differ
// between transports while everything else must not.
func normaliseMeta(s string) string {
	return metaTrRE.ReplaceAllString(normalise(s), `"$1": "X"`)
}

// golden compares got with testdata/name.golden, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the output (run go test -update if the change is right)\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

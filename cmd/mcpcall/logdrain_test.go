package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

// standaloneLogServer starts a Streamable HTTP test server that sends n
// logs on its GET stream (outside any request, as the TypeScript SDK's
// sendLoggingMessage does) while it answers every tools/call on the
// POST's stream: right before the answer's first bytes when lag < 0, else
// lag after the answer went out. Nothing orders two streams: the
// TypeScript SDK's multi-greet logs before it answers, and its last log
// arrives after the answer in 23 runs of 25, up to 12 ms after it
// (TestMeasureStandaloneLogLag). It returns the server's URL.
func standaloneLogServer(t testing.TB, n int, lag time.Duration) string {
	h := testservers.NewStreamableHandler(testservers.HTTPOptions{})
	var wg sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			var m struct{ Method string }
			if json.Unmarshal(body, &m) == nil && m.Method == "tools/call" {
				log := func() {
					for i := range n {
						h.Server().NotifyLog(mcp.LevelInfo, fmt.Sprintf("standalone log %d of %d", i+1, n))
					}
				}
				aw := &answerLogs{ResponseWriter: w, before: log}
				if lag >= 0 {
					aw.before, aw.after = nil, func() {
						wg.Add(1)
						time.AfterFunc(lag, func() { defer wg.Done(); log() })
					}
				}
				w = aw
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		wg.Wait()
		h.Close()
		srv.Close()
	})
	return srv.URL
}

// answerLogs runs before once, before the first bytes of the answer's
// body, and after once, when they have been flushed to the client.
type answerLogs struct {
	http.ResponseWriter
	before, after func()
	written       bool
	once          sync.Once
}

func (a *answerLogs) Write(p []byte) (int, error) {
	if !a.written && a.before != nil {
		a.before()
	}
	a.written = true
	return a.ResponseWriter.Write(p)
}

func (a *answerLogs) Flush() {
	http.NewResponseController(a.ResponseWriter).Flush() //nolint:errcheck // as http.Flusher
	if a.written && a.after != nil {
		a.once.Do(a.after)
	}
}

func (a *answerLogs) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// runMCPCall runs this test binary as mcpcall, a real process, with a
// home of its own (no config, no token store) and a bound, and returns
// its exit status, stdout and stderr.
func runMCPCall(t *testing.T, args ...string) result {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, args...)
	home := t.TempDir()
	cmd.Dir = home
	cmd.Env = append(os.Environ(), asMCPCall+"=1", "GORACE=atexit_sleep_ms=0", "HOME="+home, "XDG_CONFIG_HOME="+home, "MCPCALL_CONFIG=", "MCPCALL_TOKENS=", "NO_COLOR=1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// TestStandaloneLogsShown: a server that logs twice on its GET stream
// and answers the call on the POST's stream (the TypeScript SDK's
// multi-greet): with --log-level, a real mcpcall process shows both logs
// before it exits, whether they were sent right before the answer or
// arrive 10 ms after it. Without the drain at the end, mcpcall exited
// without the second (now and then) or both (every time).
func TestStandaloneLogsShown(t *testing.T) {
	for _, lag := range []time.Duration{-1, 10 * time.Millisecond} {
		url := standaloneLogServer(t, 2, lag)
		res := runMCPCall(t, "tools", "call", "echo", "text=hi", "--log-level", "info", url)
		if res.code != 0 || !strings.Contains(res.stdout, "hi") {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", res.code, res.stdout, res.stderr)
		}
		for _, want := range []string{"standalone log 1 of 2", "standalone log 2 of 2"} {
			if !strings.Contains(res.stderr, want) {
				t.Errorf("logs %v after the answer: stderr lacks %q:\n%s", lag, want, res.stderr)
			}
		}
	}
}

// The drain at the end happens only when the server's logs were asked for
// and a standalone stream is open: a plain call, a server that refuses
// the GET stream, an HTTP+SSE server (its logs come on the answer's own
// stream) and a stateless server end without it.
func TestLogDrainOnlyWhenAsked(t *testing.T) {
	const drained = "waited for the server's logs on the standalone stream"
	withGET := standaloneLogServer(t, 2, -1)
	noGET := streamable(t, testservers.HTTPOptions{NoGETStream: true})
	legacy := testservers.StartLegacy(testservers.LegacyOptions{})
	t.Cleanup(legacy.Close)
	for _, tc := range []struct {
		name  string
		args  []string
		drain bool
	}{
		{"logs asked, GET stream", []string{"--log-level", "info", withGET}, true},
		{"no logs asked", []string{withGET}, false},
		{"no GET stream", []string{"--log-level", "info", noGET}, false},
		{"HTTP+SSE", []string{"--log-level", "info", legacy.URL}, false},
		{"stateless", []string{"--log-level", "info", statelessServer(t)}, false},
	} {
		res := newRunner(t).runOK(append([]string{"tools", "call", "echo", "text=hi", "-v"}, tc.args...)...)
		if strings.Contains(res.stderr, drained) != tc.drain {
			t.Errorf("%s: drained %v, want %v:\n%s", tc.name, !tc.drain, tc.drain, res.stderr)
		}
	}
}

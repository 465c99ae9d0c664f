//go:build unix

package client_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/testservers"
)

// bridgeTarget is a stdio server that starts its session on any first
// request and refuses a second initialize, as supergateway does in front
// of a Streamable HTTP server; each of its processes appends its pid to
// the returned file.
func bridgeTarget(t *testing.T, hold bool) (client.Target, string) {
	pidLog := filepath.Join(t.TempDir(), "pids")
	o := testservers.Options{Stdio: testservers.StdioFaults{SessionOnFirstMessage: true, HoldFirstAnswer: hold, PIDLog: pidLog}}
	path, args, _ := testservers.StdioCommand()
	return client.Command(path, args...).WithEnv(append(testservers.StdioEnv(o), "GORACE=atexit_sleep_ms=0")...), pidLog
}

// startedPids returns the pids of the processes that have appended to the
// file pidLog.
func startedPids(t *testing.T, pidLog string) []int {
	t.Helper()
	b, err := os.ReadFile(pidLog)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("pid log %q: %v", b, err)
		}
		pids = append(pids, pid)
	}
	return pids
}

// A stdio server that the stateless probe left refusing initialize is
// started again and sent initialize alone; the old process is gone first,
// none is left once the Conn is closed, and the cache remembers the
// initialize era for the command line, so that the next Dial skips the probe.
// The server answers the probe at once, or (held) only once initialize
// came, after the probe's wait (supergateway, connecting to its upstream):
// then initialize's refusal is followed by a probe again, which the server
// refuses too.
func TestStdioServerStartedAgainAfterProbe(t *testing.T) {
	for _, tc := range []struct {
		name string
		hold bool
		// how long the probe is waited for: long enough for a server
		// that answers, short for one that holds the answer
		probe time.Duration
		// the attempts before initialize is sent to the new process
		want []string
	}{
		{"answered", false, time.Minute, []string{"server/discover refused", "initialize refused"}},
		// (the probe sent again may be answered after its short wait too)
		{"held", true, 10 * time.Millisecond, []string{"server/discover no answer", "initialize refused", "server/discover *"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target, pidLog := bridgeTarget(t, tc.hold)
			cache := negotiate.NewCache(0)
			c, err := client.Dial(ctxT(t), target, client.WithCache(cache), client.WithProbeTimeout(tc.probe))
			if err != nil {
				t.Fatal(err)
			}
			info := c.Info()
			a := info.Negotiation.Attempts
			var got []string
			for _, at := range a {
				got = append(got, at.Request+" "+at.Answer)
			}
			want := append(tc.want, "initialize answered")
			if info.Era != mcp.EraInitialize || !slices.EqualFunc(got, want, func(g, w string) bool {
				prefix, wild := strings.CutSuffix(w, "*")
				return g == w || wild && strings.HasPrefix(g, prefix)
			}) ||
				!strings.Contains(a[len(a)-2].Decision, "starting the server again") ||
				!strings.Contains(a[len(a)-1].Decision, "started again") {
				t.Fatalf("era %s, negotiation:\n%s", info.Era, info.Negotiation)
			}
			pids := startedPids(t, pidLog)
			if len(pids) != 2 {
				t.Fatalf("%d processes started, want 2", len(pids))
			}
			if err := syscall.Kill(pids[0], 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("the first process (%d) is still there: %v", pids[0], err)
			}
			res, err := c.CallTool(ctxT(t), "echo", map[string]any{"text": "hi"})
			if err != nil || text(t, res) != "hi" {
				t.Fatalf("echo: %+v, %v", res, err)
			}
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}

			again, err := client.Dial(ctxT(t), target, client.WithCache(cache))
			if err != nil {
				t.Fatal(err)
			}
			if r := again.Info().Negotiation; !r.FromCache || len(r.Attempts) != 1 || r.Attempts[0].Request != negotiate.RequestInitialize {
				t.Errorf("with the cache, negotiation:\n%s", r)
			}
			again.Close()
			pids = startedPids(t, pidLog)
			if len(pids) != 3 {
				t.Fatalf("%d processes started, want 3", len(pids))
			}
			for _, pid := range pids {
				if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
					t.Errorf("process %d is still there: %v", pid, err)
				}
			}
		})
	}
}

//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/anymcp/anymcp/testservers"
)

// Lines piped into a real `mcpcall bridge URL` process, its stdin closing
// at once, as a shell pipe does: every request is answered before the
// process exits 0, none of its process group left. A ping needs no
// initialize. With nothing in flight the process exits within the
// bridge's grace (1.5 s), not after it. (Issue 37: the ping was refused,
// and tools/list and tools/call were answered "the upstream's answer was
// lost".)
func TestBridgeCommandPipedStdin(t *testing.T) {
	up := testservers.StartStreamable(testservers.HTTPOptions{})
	defer up.Close()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}`
	const initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	cases := []struct {
		name  string
		lines []string
		want  func(t *testing.T, out []string)
	}{
		{"ping before initialize", []string{`{"jsonrpc":"2.0","id":7,"method":"ping"}`}, func(t *testing.T, out []string) {
			if len(out) != 1 || out[0] != `{"jsonrpc":"2.0","id":7,"result":{}}` {
				t.Errorf("stdout %q, want the one line {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}", out)
			}
		}},
		{"requests in flight", []string{initialize, initialized,
			`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"piped"}}}`,
		}, func(t *testing.T, out []string) {
			ids := map[string]bool{}
			for _, l := range out {
				var m struct {
					ID     json.RawMessage `json:"id"`
					Result json.RawMessage `json:"result"`
					Error  json.RawMessage `json:"error"`
				}
				if err := json.Unmarshal([]byte(l), &m); err != nil || m.Error != nil || m.Result == nil {
					t.Errorf("line %s", l)
				}
				ids[string(m.ID)] = true
			}
			if len(out) != 3 || !ids["1"] || !ids["2"] || !ids["3"] {
				t.Errorf("answers %q, want ids 1, 2 and 3", out)
			}
			if len(out) == 3 && !strings.Contains(out[2]+out[1], `"text":"piped"`) {
				t.Errorf("the call's answer: %q", out)
			}
		}},
		{"nothing in flight", []string{initialize, initialized}, func(t *testing.T, out []string) {
			if len(out) != 1 {
				t.Errorf("stdout %q, want initialize's answer", out)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(self, "bridge", up.URL)
			cmd.Env = append(os.Environ(), asMCPCall+"=1", "GORACE=atexit_sleep_ms=0")
			cmd.Stdin = strings.NewReader(strings.Join(tc.lines, "\n") + "\n") // closed once copied
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pgid := cmd.Process.Pid
			t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
			lines := make(chan string)
			go func() {
				defer close(lines)
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					lines <- sc.Text()
				}
			}()
			var out []string
			var first time.Time // when the first answer came: the process is up, its stdin closed
			bound := time.After(60 * time.Second)
		read:
			for {
				select {
				case l, ok := <-lines:
					if !ok {
						break read
					}
					if first.IsZero() {
						first = time.Now()
					}
					out = append(out, l)
				case <-bound:
					t.Fatalf("still running 60 s after its stdin closed; stdout %q\nstderr:\n%s", out, stderr.String())
				}
			}
			werr := cmd.Wait()
			took := time.Since(first)
			if werr != nil {
				t.Errorf("mcpcall bridge: %v\nstderr:\n%s", werr, stderr.String())
			}
			tc.want(t, out)
			if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("a process of mcpcall bridge's group is left: %v", err)
			}
			if tc.name == "nothing in flight" {
				t.Logf("exited %v after initialize's answer", took)
				if took > 1500*time.Millisecond {
					t.Errorf("exited %v after initialize's answer, with nothing in flight: want less than the grace, 1.5 s", took)
				}
			}
		})
	}
}

//go:build linux

package stdio_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/logtest"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/stdio"
)

func TestEchoRoundTrip(t *testing.T) {
	tr := start(t, fakeCommand(t, modeEcho))
	send(t, tr, request(1, "tools/call", `{"name":"echo","arguments":{"text":"héllo"}}`))
	m := mustRecv(t, tr)
	if got, _ := m.ID.Int64(); got != 1 || !m.IsResponse() {
		t.Fatalf("got %+v, want the response to id 1", m)
	}
	if string(m.Result) != `{"name":"echo","arguments":{"text":"héllo"}}` {
		t.Errorf("result %s", m.Result)
	}
	pid := tr.Pid()
	err, _ := closeWithin(t, tr, time.Second)
	if err != nil {
		t.Errorf("Close: %v, want nil", err)
	}
	assertReaped(t, pid)
}

func TestStartErrors(t *testing.T) {
	for _, cmd := range []stdio.Command{
		{},
		{Path: "/nonexistent/mcp-server"},
		{Path: "no-such-program-anymcp-test"},
		{Path: selfPath(t), Dir: "/nonexistent/dir"},
	} {
		if tr, err := stdio.Start(cmd); err == nil {
			tr.Close()
			t.Errorf("Start(%+v) succeeded, want an error", cmd)
		}
	}
}

func TestOwnProcessGroup(t *testing.T) {
	tr := start(t, fakeCommand(t, modeEcho))
	pgid, err := syscall.Getpgid(tr.Pid())
	if err != nil {
		t.Fatal(err)
	}
	if pgid != tr.Pid() {
		t.Errorf("server's process group %d, want its own (%d)", pgid, tr.Pid())
	}
	if pgid == syscall.Getpgrp() {
		t.Errorf("server shares the test's process group")
	}
}

func TestEnvironment(t *testing.T) {
	t.Setenv("STDIO_TEST_SECRET", "s3cret")
	t.Setenv("HOME", "/home/tester")
	t.Setenv("TERM", "xterm-test")
	envOf := func(t *testing.T, cmd stdio.Command) map[string]string {
		tr := start(t, cmd)
		send(t, tr, request(1, "env", ""))
		m := mustRecv(t, tr)
		var r struct{ Env []string }
		if err := json.Unmarshal(m.Result, &r); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{}
		for _, kv := range r.Env {
			k, v, _ := strings.Cut(kv, "=")
			if _, dup := env[k]; dup {
				t.Errorf("%s appears twice in the environment", k)
			}
			env[k] = v
		}
		return env
	}
	allowed := []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "STDIO_TEST_MODE", "GORACE", "EXTRA"}

	t.Run("allowlist", func(t *testing.T) {
		env := envOf(t, fakeCommand(t, modeEnv, "EXTRA=1", "TERM=dumb"))
		for k := range env {
			if !slices.Contains(allowed, k) {
				t.Errorf("server sees %s, which is not in the allowlist", k)
			}
		}
		for k, want := range map[string]string{"HOME": "/home/tester", "TERM": "dumb", "EXTRA": "1", "PATH": os.Getenv("PATH")} {
			if env[k] != want {
				t.Errorf("%s=%q, want %q", k, env[k], want)
			}
		}
	})
	t.Run("inherit", func(t *testing.T) {
		cmd := fakeCommand(t, modeEnv, "HOME=/override")
		cmd.InheritEnv = true
		env := envOf(t, cmd)
		if env["STDIO_TEST_SECRET"] != "s3cret" {
			t.Errorf("InheritEnv: STDIO_TEST_SECRET=%q, want s3cret", env["STDIO_TEST_SECRET"])
		}
		if env["HOME"] != "/override" {
			t.Errorf("InheritEnv: HOME=%q, want Command.Env to override it", env["HOME"])
		}
	})
}

func TestConcurrentSend(t *testing.T) {
	tr := start(t, fakeCommand(t, modeEcho))
	const senders, each = 8, 100
	// Every tenth message is long enough to straddle the pipe's buffer, so
	// that writes are split.
	padLen := func(id int64) int {
		if id%10 == 0 {
			return int(id*997) % (160 << 10)
		}
		return int(id % 300)
	}
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			for i := range each {
				id := int64(s*each + i)
				pad := strings.Repeat("p", padLen(id))
				params := fmt.Sprintf(`{"id":%d,"pad":%q}`, id, pad)
				if err := tr.Send(context.Background(), request(id, "echo", params)); err != nil {
					t.Errorf("Send %d: %v", id, err)
					return
				}
			}
		})
	}
	seen := make(map[int64]bool)
	for range senders * each {
		m := mustRecv(t, tr)
		id, _ := m.ID.Int64()
		var p struct {
			ID  int64
			Pad string
		}
		if err := json.Unmarshal(m.Result, &p); err != nil || p.ID != id || len(p.Pad) != padLen(id) {
			t.Fatalf("response %d is damaged: %v", id, err)
		}
		if seen[id] {
			t.Fatalf("id %d answered twice", id)
		}
		seen[id] = true
	}
	wg.Wait()
	if tail := tr.StderrTail(); tail != "" {
		t.Errorf("server complained: %s", tail)
	}
}

func TestSendKeepsOneMessagePerLine(t *testing.T) {
	tr := start(t, fakeCommand(t, modeEcho))
	pretty := "{\n  \"a\": 1,\r\n  \"b\": [1,\n 2],\n  \"s\": \"x\\ny\"\n}"
	send(t, tr, request(1, "echo", pretty))
	send(t, tr, request(2, "echo", `{}`))
	m := mustRecv(t, tr)
	var got, want any
	json.Unmarshal(m.Result, &got)
	json.Unmarshal([]byte(pretty), &want)
	if id, _ := m.ID.Int64(); id != 1 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got id %s result %s", m.ID, m.Result)
	}
	if m := mustRecv(t, tr); m.ID.Raw() != "2" {
		t.Fatalf("got id %s, want 2", m.ID)
	}
	if tail := tr.StderrTail(); tail != "" {
		t.Errorf("server saw a broken line: %s", tail)
	}
}

func TestSendInvalidMessage(t *testing.T) {
	tr := start(t, fakeCommand(t, modeEcho))
	if err := tr.Send(context.Background(), request(1, "x", `{bad`)); err == nil {
		t.Fatal("Send of invalid params succeeded")
	}
	if err := tr.Send(context.Background(), nil); err == nil {
		t.Fatal("Send(nil) succeeded")
	}
	send(t, tr, request(2, "x", `{}`)) // the transport is still fine
	if m := mustRecv(t, tr); m.ID.Raw() != "2" {
		t.Fatalf("got id %s", m.ID)
	}
}

func TestSendContextDoneBeforeWrite(t *testing.T) {
	tr := start(t, fakeCommand(t, modeEcho))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := tr.Send(ctx, request(1, "echo", `{}`)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Send with a canceled context: %v, want context.Canceled", err)
	}
	send(t, tr, request(2, "echo", `{}`))
	if m := mustRecv(t, tr); m.ID.Raw() != "2" {
		t.Fatalf("first response is to id %s, want 2: the canceled message was sent", m.ID)
	}
}

func TestSendContextDoneDuringWrite(t *testing.T) {
	cmd := fakeCommand(t, modeNoRead)
	cmd.StdinCloseWait, cmd.TermWait = 50*time.Millisecond, time.Second
	tr := start(t, cmd)

	// The server never reads: the pipe takes the first 64 KiB, then the
	// write blocks until the context ends.
	big := request(1, "echo", `"`+strings.Repeat("z", 1<<20)+`"`)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	begin := time.Now()
	err := tr.Send(ctx, big)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Fatalf("Send: %v, want DeadlineExceeded and ErrOutcomeUnknown", err)
	}
	if took := time.Since(begin); took > 2*time.Second {
		t.Errorf("Send took %v after its context ended", took)
	}

	// The half-written line still owns the pipe: the next Send cannot
	// start, and says so without claiming anything was sent.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	err = tr.Send(ctx2, request(2, "echo", `{}`))
	if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Fatalf("second Send: %v, want only DeadlineExceeded", err)
	}
	if err, _ := closeWithin(t, tr, 3*time.Second); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestSendLongLinesWithLiveContext(t *testing.T) {
	tr := start(t, fakeCommand(t, modeEcho))
	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), patience)
		params := `"` + strings.Repeat("q", 4<<20) + `"`
		if err := tr.Send(ctx, request(int64(i), "echo", params)); err != nil {
			t.Fatal(err)
		}
		cancel()
		if m := mustRecv(t, tr); len(m.Result) != len(params) {
			t.Fatalf("result of %d bytes, want %d", len(m.Result), len(params))
		}
	}
}

func TestBannerAndJunkLinesAreSkipped(t *testing.T) {
	var logs logtest.Buffer
	cmd := fakeCommand(t, modeBanner)
	cmd.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	tr := start(t, cmd)
	send(t, tr, request(1, "echo", `{"ok":true}`))
	m := mustRecv(t, tr)
	if m.ID.Raw() != "1" || string(m.Result) != `{"ok":true}` {
		t.Fatalf("got %+v", m)
	}
	out := logs.String()
	for _, want := range []string{"Example MCP server v1.2", "not json {", "[1,2]", `\"jsonrpc\":\"1.0\"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks a warning quoting %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "level=WARN"); n != 4 {
		t.Errorf("%d warnings, want 4 (blank lines are not warned about):\n%s", n, out)
	}
}

func TestBatchIsSplit(t *testing.T) {
	tr := start(t, fakeCommand(t, modeBatch))
	send(t, tr, request(7, "echo", `{"a":1}`))
	m1 := mustRecv(t, tr)
	m2 := mustRecv(t, tr)
	if m1.ID.Raw() != "7" || !m1.IsResponse() {
		t.Errorf("first message %+v, want the response", m1)
	}
	if m2.Method != "notifications/progress" || !m2.IsNotification() {
		t.Errorf("second message %+v, want the notification", m2)
	}
}

func TestBigResult(t *testing.T) {
	tr := start(t, fakeCommand(t, modeBig))
	send(t, tr, request(1, "big", `{}`))
	m := mustRecv(t, tr)
	if len(m.Result) != bigResult {
		t.Fatalf("result of %d bytes, want %d", len(m.Result), bigResult)
	}
}

func TestOversizeLineEndsTransport(t *testing.T) {
	const limit = 1 << 20
	cmd := fakeCommand(t, modeOversize, "STDIO_TEST_N=4194304")
	cmd.MaxLineSize = limit
	tr := start(t, cmd)
	pid := tr.Pid()
	send(t, tr, request(1, "echo", `{}`))
	send(t, tr, request(2, "huge", `{}`))
	if m := mustRecv(t, tr); m.ID.Raw() != "1" {
		t.Fatalf("got id %s, want 1", m.ID)
	}
	_, err := recv(t, tr)
	var tooLong *stdio.LineTooLongError
	if !errors.As(err, &tooLong) || tooLong.Limit != limit {
		t.Fatalf("Recv: %v, want *LineTooLongError{%d}", err, limit)
	}
	// The transport stopped the server without being closed.
	waitDead(t, pid)
	if err := tr.Send(context.Background(), request(3, "echo", `{}`)); !errors.As(err, &tooLong) {
		t.Errorf("Send after the oversize line: %v, want the *LineTooLongError", err)
	}
	if err := tr.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	assertReaped(t, pid)
}

func TestChattyStderrNeverBlocks(t *testing.T) {
	var copied atomic.Int64
	var lines atomic.Int64
	cmd := fakeCommand(t, modeChatty)
	cmd.Stderr = writerFunc(func(p []byte) (int, error) { copied.Add(int64(len(p))); return len(p), nil })
	cmd.StderrLogger = slog.New(countHandler{&lines})
	tr := start(t, cmd)
	send(t, tr, request(1, "echo", `{}`))
	if m := mustRecv(t, tr); m.ID.Raw() != "1" {
		t.Fatalf("got id %s", m.ID)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if copied.Load() < chattyBytes-200 {
		t.Errorf("copied %d bytes of stderr, want about %d", copied.Load(), chattyBytes)
	}
	tail := tr.StderrTail()
	if len(tail) != 4096 || !strings.HasSuffix(tail, chattyLast) {
		t.Errorf("tail of %d bytes ending %q", len(tail), tail[max(0, len(tail)-40):])
	}
	if lines.Load() < chattyBytes/200 {
		t.Errorf("logged %d stderr lines", lines.Load())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// countHandler counts records that carry a "stderr" attribute.
type countHandler struct{ n *atomic.Int64 }

func (h countHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h countHandler) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "stderr" && r.Level == slog.LevelInfo {
			h.n.Add(1)
		}
		return true
	})
	return nil
}
func (h countHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h countHandler) WithGroup(string) slog.Handler      { return h }

func TestStderrLoggerLines(t *testing.T) {
	var logs logtest.Buffer
	cmd := fakeCommand(t, modeCrash, "STDIO_TEST_N=1")
	cmd.StderrLogger = slog.New(slog.NewTextHandler(&logs, nil))
	tr := start(t, cmd)
	send(t, tr, request(1, "echo", `{}`))
	mustRecv(t, tr)
	recv(t, tr) // the exit: stderr is drained by now
	want := `level=INFO msg="server stderr" stderr="fatal: the last words of the server"`
	if !strings.Contains(logs.String(), want) {
		t.Errorf("log:\n%s\nwant a line with %s", logs.String(), want)
	}
}

func TestSendDoesNotAllocate(t *testing.T) {
	tr := start(t, fakeCommand(t, modeSink))
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	m := request(1, "tools/call", `{"name":"echo","arguments":{"text":"hello"}}`)
	allocs := testing.AllocsPerRun(1000, func() {
		if err := tr.Send(ctx, m); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Send allocates %v times per message, want 0", allocs)
	}
}

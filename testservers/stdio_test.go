package testservers

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

func TestStdioServerRequests(t *testing.T) {
	w := newStdioWire(t, context.Background(), Options{})
	w.initialize(t)
	for i, tt := range []struct{ tool, method, want string }{
		{"sample", "sampling/createMessage", "sampled!"},
		{"elicit", "elicitation/create", `accept {"name":"Ann"}`},
		{"roots", "roots/list", "file:///a\nfile:///b"},
	} {
		w.send(t, reqJSON(i+1, "tools/call", `{"name":"`+tt.tool+`","arguments":{"prompt":"p","message":"m"}}`))
		req := w.recv(t)
		if req.Method != tt.method || !req.IsRequest() {
			t.Fatalf("%s: got %+v", tt.tool, req)
		}
		w.send(t, `{"jsonrpc":"2.0","id":`+req.ID.Raw()+`,"result":`+clientAnswers[tt.method]+`}`)
		resp := w.recv(t)
		if text, isErr := toolText(t, resp); text != tt.want || isErr {
			t.Errorf("%s: %q %v", tt.tool, text, isErr)
		}
	}
}

func TestStdioProgressAndCancel(t *testing.T) {
	w := newStdioWire(t, context.Background(), Options{})
	w.initialize(t)
	_, others := w.request(t, 1, "tools/call", `{"name":"slow","arguments":{"steps":2,"delayMs":1},"_meta":{"progressToken":"t"}}`)
	if len(others) != 2 || others[0].Method != "notifications/progress" {
		t.Errorf("progress: %v", others)
	}

	w.send(t, reqJSON(2, "tools/call", `{"name":"slow","arguments":{"steps":100000,"delayMs":10},"_meta":{"progressToken":"t"}}`))
	if m := w.recv(t); m.Method != "notifications/progress" {
		t.Fatalf("got %+v", m)
	}
	w.send(t, notifJSON("notifications/cancelled", `{"requestId":2,"reason":"enough"}`))
	// The request gets no response; a later ping's answer comes next.
	w.send(t, reqJSON(3, "ping", ""))
	for {
		m := w.recv(t)
		if m.IsResponse() {
			if m.ID.Raw() != "3" {
				t.Fatalf("response to %s after cancellation", m.ID)
			}
			break
		}
	}
	if st := w.srv.Stats(); st.Cancelled != 1 || st.LastCancelledID != "2" || st.LastCancelledReason != "enough" {
		t.Errorf("stats %+v", st)
	}
}

func TestStdioInvalidLines(t *testing.T) {
	w := newStdioWire(t, context.Background(), Options{})
	for _, tt := range []struct {
		line string
		code int64
	}{
		{"not json", jsonrpc.CodeParseError},
		{`{"jsonrpc":"1.0","id":1,"method":"ping"}`, jsonrpc.CodeInvalidRequest},
		{`[1]`, jsonrpc.CodeInvalidRequest},
	} {
		w.send(t, tt.line)
		m := w.recv(t)
		if m.Error == nil || m.Error.Code != tt.code || !m.ID.IsZero() {
			t.Errorf("%s: %+v %v", tt.line, m, m.Error)
		}
	}
	w.send(t, "") // blank lines are skipped
	if m, _ := w.request(t, 1, "ping", ""); m.Error != nil {
		t.Error(m.Error)
	}
}

func TestStdioEOFDrains(t *testing.T) {
	w := newStdioWire(t, context.Background(), Options{})
	w.initialize(t)
	w.send(t, reqJSON(1, "tools/call", `{"name":"slow","arguments":{"steps":3,"delayMs":10}}`))
	w.send(t, reqJSON(2, "tools/call", `{"name":"sample","arguments":{"prompt":"p"}}`))
	if m := w.recv(t); m.Method != "sampling/createMessage" {
		t.Fatalf("got %+v", m)
	}
	if err := w.shutdown(t); err != nil {
		t.Fatalf("ServeStdio after EOF: %v", err)
	}
	var got []string
	for m := range w.msgs {
		if m.IsResponse() {
			text, isErr := toolText(t, m)
			got = append(got, m.ID.Raw()+" "+text+" "+fmt.Sprint(isErr))
		}
	}
	slices.Sort(got)
	// slow finishes and answers; sample fails, as nobody can answer its
	// sampling request any more.
	if len(got) != 2 || got[0] != "1 done 3 steps false" || !strings.HasPrefix(got[1], "2 sampling/createMessage failed") || !strings.HasSuffix(got[1], "true") {
		t.Errorf("answers after EOF: %q", got)
	}
}

func TestStdioContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	w := newStdioWire(t, ctx, Options{})
	w.initialize(t)
	w.send(t, reqJSON(1, "tools/call", `{"name":"slow","arguments":{"steps":100000,"delayMs":10}}`))
	cancel()
	select {
	case err := <-w.done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("ServeStdio: %v", err)
		}
		w.done <- err // for the cleanup
	case <-time.After(testTimeout):
		t.Fatal("ServeStdio did not return when ctx ended")
	}
}

func TestStdioWriteError(t *testing.T) {
	inR, inW := io.Pipe()
	errc := make(chan error, 1)
	go func() { errc <- ServeStdio(context.Background(), inR, failingWriter{}, Options{}) }()
	_, _ = io.WriteString(inW, reqJSON(1, "ping", "")+"\n")
	inW.Close()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("ServeStdio hangs")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestStdioBig(t *testing.T) {
	w := newStdioWire(t, context.Background(), Options{})
	m, _ := w.request(t, 1, "tools/call", `{"name":"big","arguments":{"mib":3}}`)
	if text, _ := toolText(t, m); len(text) != 3<<20 {
		t.Errorf("big: %d bytes", len(text))
	}
}

func TestStdioEnv(t *testing.T) {
	opts := Options{Name: "x", Versions: []string{"2025-06-18", "2025-03-26"}, Instructions: "i", PageSize: 3}
	for _, kv := range StdioEnv(opts) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv(EnvLog, "")
	got, err := OptionsFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "x" || !slices.Equal(got.Versions, opts.Versions) || got.Instructions != "i" || got.PageSize != 3 || got.Logger != nil {
		t.Errorf("OptionsFromEnv: %+v", got)
	}
	t.Setenv(EnvPageSize, "many")
	if _, err := OptionsFromEnv(); err == nil {
		t.Error("bad page size accepted")
	}
	t.Setenv(EnvPageSize, "")
	t.Setenv(EnvLog, "debug")
	if got, err := OptionsFromEnv(); err != nil || got.Logger == nil {
		t.Errorf("log level: %v", err)
	}
	path, args, env := StdioCommand()
	if path == "" || len(args) != 0 || !slices.Equal(env, []string{EnvVar + "=stdio"}) {
		t.Errorf("StdioCommand: %q %q %q", path, args, env)
	}
}

// TestStdioSubprocess runs this test binary as a stdio server, as a
// client test or `mcpcall demo` does.
func TestStdioSubprocess(t *testing.T) {
	path, args, env := StdioCommand()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(append(os.Environ(), env...), StdioEnv(Options{PageSize: 4, Name: "child"})[1:]...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := bufio.NewReader(stdout)
	roundTrip := func(line string) *jsonrpc.Message {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatal(err)
		}
		b, err := out.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		return mustDecode(t, string(b))
	}
	init := result[mcp.InitializeResult](t, roundTrip(reqJSON(1, "initialize", initParams)))
	if init.ServerInfo.Name != "child" {
		t.Errorf("serverInfo %+v", init.ServerInfo)
	}
	if _, err := io.WriteString(stdin, notifJSON("notifications/initialized", "")+"\n"); err != nil {
		t.Fatal(err)
	}
	type page struct {
		Tools      []json.RawMessage `json:"tools"`
		NextCursor string            `json:"nextCursor"`
	}
	tl := result[page](t, roundTrip(reqJSON(2, "tools/list", "")))
	if len(tl.Tools) != 4 || tl.NextCursor == "" {
		t.Errorf("tools/list with page size 4: %d tools, cursor %q", len(tl.Tools), tl.NextCursor)
	}
	if text, _ := toolText(t, roundTrip(reqJSON(3, "tools/call", `{"name":"echo","arguments":{"text":"from the child"}}`))); text != "from the child" {
		t.Errorf("echo: %q", text)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("child exit: %v", err)
	}
}

package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/anymcp/anymcp/testservers"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/anymcp/anymcp/bridge"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/fleet"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// A method the gateway does not route is -32601, naming it; ping is
// answered without any server.
func TestCallMethods(t *testing.T) {
	h := newHub([]fleet.Server{{Name: "dead", Target: client.URL("http://127.0.0.1:1/mcp")}}, nil, discard())
	u, err := h.dial(ctxT(t), bridge.Downstream{})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	var raw json.RawMessage
	err = u.Call(ctxT(t), "tasks/list", nil, &raw)
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeMethodNotFound || !strings.Contains(rpc.Message, `"tasks/list"`) {
		t.Errorf("tasks/list: %v", err)
	}
	if err := u.Call(ctxT(t), "ping", nil, &raw); err != nil || string(raw) != "{}" {
		t.Errorf("ping: %s, %v", raw, err)
	}
	info := u.Info()
	if info.Era != mcp.EraInitialize || info.ServerInfo.Name != ServerName || info.Capabilities.Tools == nil ||
		info.Capabilities.Resources == nil || !info.Capabilities.Resources.Subscribe || info.Capabilities.Logging == nil {
		t.Errorf("info %+v", info)
	}
}

// The servers' instructions are given under their names, in
// configuration order, and bounded.
func TestInstructions(t *testing.T) {
	h := newHub([]fleet.Server{{Name: "b"}, {Name: "a"}, {Name: "c"}}, nil, discard())
	h.noteInfo("a", &client.Info{Instructions: "Use a."})
	h.noteInfo("b", &client.Info{Instructions: "Use b."})
	if got, want := h.instructionsText(), "## b\nUse b.\n\n## a\nUse a."; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	h.noteInfo("c", &client.Info{Instructions: strings.Repeat("é", 10_000)})
	got := h.instructionsText()
	if len(got) > maxInstructions || !utf8.ValidString(got) || !strings.HasSuffix(got, "…") {
		t.Errorf("%d bytes, valid %v, ends %q", len(got), utf8.ValidString(got), got[len(got)-8:])
	}
}

// A session's log level reaches each server it uses, those connected
// after it was set too; another session's servers keep their own.
func TestLogLevelPerSession(t *testing.T) {
	up := startUpstreams(t)
	_, url := startGateway(t, up.servers()[1:3], Config{})
	quiet := dial(t, url, eras[1])
	if err := quiet.SetLogLevel(ctxT(t), mcp.LevelError); err != nil {
		t.Fatal(err)
	}
	loud := dial(t, url, eras[1])
	if err := loud.SetLogLevel(ctxT(t), mcp.LevelDebug); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"level": "info", "message": "m"}
	for _, s := range []string{"streamable", "sse"} {
		if got := callText(t, quiet, s+"__log", args); got != "filtered" {
			t.Errorf("%s at level error: %q, want filtered", s, got)
		}
		if got := callText(t, loud, s+"__log", args); got != "logged" {
			t.Errorf("%s at level debug: %q, want logged", s, got)
		}
	}
	// The instructions of a server connected once reach later sessions.
	if got := dial(t, url, eras[1]).Info().Instructions; !strings.Contains(got, "## streamable\nUse echo to echo.") {
		t.Errorf("instructions %q", got)
	}
}

// A session's roots change reaches every server its fleet connected, and
// no server of another session.
func TestRootsChangedFanOut(t *testing.T) {
	up := startUpstreams(t)
	_, url := startGateway(t, up.servers()[1:3], Config{})
	roots := client.WithRoots(func(context.Context) ([]mcp.Root, error) { return []mcp.Root{{URI: "file:///w"}}, nil })
	c := dial(t, url, eras[1], roots)
	callText(t, c, "streamable__echo", map[string]any{"text": "connect"})
	callText(t, c, "sse__echo", map[string]any{"text": "connect"})
	if err := c.NotifyRootsChanged(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*testservers.Server{up.streamable.Server(), up.sse.Server()} {
		if _, err := s.WaitStats(ctxT(t), func(st testservers.Stats) bool { return st.RootsListChanged == 1 }); err != nil {
			t.Errorf("%s: %v (roots changed %d times)", s.Options().Name, err, s.Stats().RootsListChanged)
		}
	}
}

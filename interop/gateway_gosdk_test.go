package interop_test

import (
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anymcp/anymcp/gateway"
	"github.com/anymcp/anymcp/testservers"
)

// go-sdk's client through the gateway over Streamable HTTP, at
// 2026-07-28 and at 2025-11-25.
func TestGatewayGoSDKHTTP(t *testing.T) {
	for _, v := range clientVersions {
		t.Run(v, func(t *testing.T) {
			f := startGatewayFleet(t, gateway.Config{})
			// go-sdk v1.8.0 sends a non-ASCII name raw in Mcp-Name
			// (2026-07-28 over HTTP), where SEP-2243 wants the Base64
			// sentinel: the gateway refuses it, as the upstream would.
			rawName := v >= "2026-07-28"
			r := driveGatewayGoSDK(t, &gosdk.StreamableClientTransport{Endpoint: f.url + "/mcp", MaxRetries: -1}, v, rawName)
			checkGatewayReport(t, r, true)
			reads := 1
			if rawName {
				reads = 0
			}
			f.checkUpstreamsHit(t, reads)
		})
	}
}

// go-sdk's client through the gateway's stdio face, on pipes in this
// process (what `mcpcall bridge --all` serves on its stdin and stdout).
func TestGatewayGoSDKStdio(t *testing.T) {
	for _, v := range clientVersions {
		t.Run(v, func(t *testing.T) {
			f := startGatewayFleet(t, gateway.Config{})
			cr, gw := io.Pipe() // gateway → client
			gr, cw := io.Pipe() // client → gateway
			ctx, cancel := context.WithTimeout(context.Background(), bridgeTimeout)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				err := f.gw.ServeStdio(ctx, "", gr, gw)
				_ = gw.Close()
				done <- err
			}()
			r := driveGatewayGoSDK(t, &gosdk.IOTransport{Reader: cr, Writer: cw}, v, false)
			_ = cw.Close() // the client's stdin ends: the face returns
			if err := <-done; err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrClosedPipe) {
				t.Errorf("ServeStdio: %v", err)
			}
			checkGatewayReport(t, r, true)
			f.checkUpstreamsHit(t, 1)
		})
	}
}

// A view at /mcp/VIEW, seen by go-sdk's client: only the view's tools are
// listed, and a call of a tool outside it is refused before any upstream
// runs it.
func TestGatewayGoSDKView(t *testing.T) {
	f := startGatewayFleet(t, gateway.Config{Views: []gateway.View{
		{Name: ""},
		{Name: "team", Allow: []string{"streamable__*", "server:sse"}, Deny: []string{"*__elicit"}},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), bridgeTimeout)
	defer cancel()
	c := gosdk.NewClient(&gosdk.Implementation{Name: "interop-gosdk-view", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &gosdk.StreamableClientTransport{Endpoint: f.url + "/mcp/team", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect /mcp/team: %v", err)
	}
	defer cs.Close()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
		if !strings.HasPrefix(tool.Name, "streamable__") && !strings.HasPrefix(tool.Name, "sse__") || strings.HasSuffix(tool.Name, "__elicit") {
			t.Errorf("view team lists %s", tool.Name)
		}
	}
	for _, want := range []string{"streamable__echo", "sse__echo"} {
		if !slices.Contains(names, want) {
			t.Errorf("view team lacks %s: %v", want, names)
		}
	}
	res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: "sse__echo", Arguments: map[string]any{"text": "in view"}})
	if err != nil || goSDKText(res) != "in view" {
		t.Errorf("sse__echo in the view: %q, %v", goSDKText(res), err)
	}
	for _, name := range []string{"stdio__echo", "stateless__echo", "streamable__elicit"} {
		res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: name, Arguments: map[string]any{"text": "outside", "message": "m"}})
		if err == nil && !res.IsError {
			t.Errorf("%s, outside the view, ran: %q", name, goSDKText(res))
		}
	}
	if n := f.stateless.Server().Stats().ToolCalls["echo"]; n != 0 {
		t.Errorf("the stateless upstream ran echo %d times for a client of a view without it", n)
	}
	if n := f.streamable.Server().Stats().ToolCalls["elicit"]; n != 0 {
		t.Errorf("the streamable upstream ran elicit %d times for a client of a view without it", n)
	}
}

// driveGatewayGoSDK runs the gateway steps with go-sdk's client over tr,
// asking for revision v. With rawName, the read of the non-ASCII URI must
// be refused for its raw Mcp-Name header (go-sdk's, not the gateway's,
// fault: interop/RESULTS.md).
func driveGatewayGoSDK(t *testing.T, tr gosdk.Transport, v string, rawName bool) *gwReport {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), bridgeTimeout)
	defer cancel()
	r := newGWReport()
	var mu sync.Mutex
	listChanged := make(chan struct{}, 16)
	c := gosdk.NewClient(&gosdk.Implementation{Name: "interop-gosdk", Version: "1"}, &gosdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *gosdk.ToolListChangedRequest) { listChanged <- struct{}{} },
		ElicitationHandler: func(_ context.Context, req *gosdk.ElicitRequest) (*gosdk.ElicitResult, error) {
			mu.Lock()
			r.asked = append(r.asked, req.Params.Message)
			mu.Unlock()
			return &gosdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada of " + req.Params.Message}}, nil
		},
	})
	cs, err := c.Connect(ctx, tr, &gosdk.ClientSessionOptions{ProtocolVersion: v})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer func() {
		if err := cs.Close(); err != nil && !strings.Contains(err.Error(), "EOF") && !errors.Is(err, io.ErrClosedPipe) {
			t.Errorf("close: %v", err)
		}
	}()
	if got := cs.InitializeResult().ProtocolVersion; got != v {
		t.Errorf("negotiated %s, want %s", got, v)
	}
	if got := cs.InitializeResult().ServerInfo; got == nil || got.Name != gateway.ServerName {
		t.Errorf("serverInfo %+v, want %s", got, gateway.ServerName)
	}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		r.tools = append(r.tools, tool.Name)
	}
	for _, s := range gwServers {
		res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: s + "__echo", Arguments: map[string]any{"text": gwEchoText(s)}})
		if err != nil {
			t.Errorf("%s__echo: %v", s, err)
			continue
		}
		r.echo[s] = goSDKText(res)
	}
	for _, s := range gwPromptServers {
		res, err := cs.GetPrompt(ctx, &gosdk.GetPromptParams{Name: s + "__greet", Arguments: map[string]string{"name": "Ann"}})
		if err != nil {
			t.Errorf("prompts/get %s__greet: %v", s, err)
			continue
		}
		for _, m := range res.Messages {
			if tc, ok := m.Content.(*gosdk.TextContent); ok {
				r.prompts[s] += tc.Text
			}
		}
	}
	for _, uri := range gwResources() {
		res, err := cs.ReadResource(ctx, &gosdk.ReadResourceParams{URI: uri})
		if rawName && uri == testservers.NonASCIIResourceURI {
			if err == nil || !strings.Contains(err.Error(), "Mcp-Name") {
				t.Errorf("resources/read %s with a raw Mcp-Name: %v, want the header refused (has go-sdk changed?)", uri, err)
			}
			r.resources[uri] = "refused: raw UTF-8 in Mcp-Name"
			continue
		}
		if err != nil {
			t.Errorf("resources/read %s: %v", uri, err)
			continue
		}
		for _, c := range res.Contents {
			r.resources[uri] += c.Text
		}
	}
	for _, s := range gwElicitServers {
		res, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: s + "__elicit", Arguments: map[string]any{"message": "who via " + s}})
		if err != nil {
			t.Errorf("%s__elicit: %v", s, err)
			continue
		}
		r.elicit[s] = goSDKText(res)
	}
	// A list change of an upstream reaches the client that listens.
	for _, s := range []string{"streamable", "sse"} {
		for len(listChanged) > 0 { // one that came before is not this one
			<-listChanged
		}
		if _, err := cs.CallTool(ctx, &gosdk.CallToolParams{Name: s + "__notify_changes", Arguments: map[string]any{}}); err != nil {
			t.Errorf("%s__notify_changes: %v", s, err)
			continue
		}
		waitN(ctx, t, s+"'s notifications/tools/list_changed", listChanged, 1)
	}
	mu.Lock()
	defer mu.Unlock()
	r.asked = slices.Clone(r.asked)
	return r
}

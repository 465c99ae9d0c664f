package interop_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anymcp/anymcp/client"
)

// The official go-sdk's servers: one mcp.Server with the three tools,
// behind the handler each row asks for.

type echoIn struct {
	Text string `json:"text"`
}

type progressIn struct {
	Steps int `json:"steps"`
}

type slowIn struct{}

func text(s string) *gosdk.CallToolResult {
	return &gosdk.CallToolResult{Content: []gosdk.Content{&gosdk.TextContent{Text: s}}}
}

// newGoSDKServer returns a go-sdk server with the three tools, restricted
// to versions (all it knows when nil).
func newGoSDKServer(versions []string, probe *cancelProbe) *gosdk.Server {
	s := gosdk.NewServer(&gosdk.Implementation{Name: "interop-go-sdk", Version: "v0"},
		&gosdk.ServerOptions{SupportedProtocolVersions: versions})
	gosdk.AddTool(s, &gosdk.Tool{Name: echoTool, Description: "answers its text"},
		func(ctx context.Context, req *gosdk.CallToolRequest, in echoIn) (*gosdk.CallToolResult, any, error) {
			return text(in.Text), nil, nil
		})
	gosdk.AddTool(s, &gosdk.Tool{Name: progressTool, Description: "one progress notification a step"},
		func(ctx context.Context, req *gosdk.CallToolRequest, in progressIn) (*gosdk.CallToolResult, any, error) {
			tok := req.Params.GetProgressToken()
			for i := 1; i <= in.Steps && tok != nil; i++ {
				if err := req.Session.NotifyProgress(ctx, &gosdk.ProgressNotificationParams{
					ProgressToken: tok, Progress: float64(i), Total: float64(in.Steps),
				}); err != nil {
					return nil, nil, err
				}
			}
			return text("done"), nil, nil
		})
	gosdk.AddTool(s, &gosdk.Tool{Name: slowTool, Description: "waits for its cancellation"},
		func(ctx context.Context, req *gosdk.CallToolRequest, _ slowIn) (*gosdk.CallToolResult, any, error) {
			err := runSlow(ctx, probe, func() error {
				return req.Session.NotifyProgress(ctx, &gosdk.ProgressNotificationParams{
					ProgressToken: req.Params.GetProgressToken(), Progress: 1, Message: "started",
				})
			})
			if err != nil {
				return nil, nil, err
			}
			return text("finished"), nil, nil
		})
	return s
}

// serveHTTP serves h at path on 127.0.0.1, port 0, until the test ends.
func serveHTTP(t *testing.T, path string, h http.Handler) string {
	mux := http.NewServeMux()
	mux.Handle(path, h)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return hs.URL + path
}

// goSDKModern is go-sdk's 2026-07-28-only stateless server: the server of
// issue 9's report. PropagateRequestCancellation lets its handler see a
// call cancelled by the closing of its stream (without it, go-sdk lets the
// handler run on).
func goSDKModern(t *testing.T) *peerServer {
	probe := newCancelProbe()
	s := newGoSDKServer([]string{"2026-07-28"}, probe)
	h := gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s },
		&gosdk.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true})
	return goPeer(t, client.URL(serveHTTP(t, "/mcp", h)), probe)
}

// goSDKLegacy is a go-sdk stateful Streamable HTTP server that speaks the
// 2025 revisions only.
func goSDKLegacy(t *testing.T) *peerServer {
	probe := newCancelProbe()
	s := newGoSDKServer([]string{"2025-11-25", "2025-06-18", "2025-03-26"}, probe)
	h := gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s }, nil)
	return goPeer(t, client.URL(serveHTTP(t, "/mcp", h)), probe)
}

// goSDKDefaultStateless is a go-sdk stateless Streamable HTTP server
// with the default revisions: 2026-07-28 for stateless requests, the 2025
// revisions through initialize.
func goSDKDefaultStateless(t *testing.T) *peerServer {
	probe := newCancelProbe()
	s := newGoSDKServer(nil, probe)
	h := gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s },
		&gosdk.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true})
	return goPeer(t, client.URL(serveHTTP(t, "/mcp", h)), probe)
}

// goSDKDefault is a go-sdk stateful Streamable HTTP server with its
// defaults. go-sdk serves 2026-07-28 only on a stateless server: this one
// answers server/discover with -32022 listing the 2025 revisions.
func goSDKDefault(t *testing.T) *peerServer {
	probe := newCancelProbe()
	s := newGoSDKServer(nil, probe)
	h := gosdk.NewStreamableHTTPHandler(func(*http.Request) *gosdk.Server { return s }, nil)
	return goPeer(t, client.URL(serveHTTP(t, "/mcp", h)), probe)
}

// goSDKSSE is go-sdk's HTTP+SSE handler (2024-11-05 transport).
func goSDKSSE(t *testing.T) *peerServer {
	probe := newCancelProbe()
	s := newGoSDKServer(nil, probe)
	h := gosdk.NewSSEHandler(func(*http.Request) *gosdk.Server { return s }, nil)
	return goPeer(t, client.URL(serveHTTP(t, "/sse", h)), probe)
}

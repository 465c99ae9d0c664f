package interop_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"

	"github.com/anymcp/anymcp/client"
)

// mcp-go's servers: one MCPServer with the three tools, behind the
// transport each row asks for.

// mcp-go v1.2.1's Streamable HTTP server loses a notification now and
// then: its forwarder goroutine takes the notification off the session's
// channel, then waits for the response writer's lock; when the handler has
// returned meanwhile, the final drain writes the answer, closes the
// request, and the forwarder drops what it holds (streamable_http.go,
// "if the done chan is closed ... just return"). A progress notification
// sent just before the tool returns is lost that way, in about one call of
// fifty here. So its progress tool waits, after each notification, until
// the client says it received it (acks, fed by the progress step): the
// answer leaves only after every notification was delivered, and a
// notification the client never gets fails the call.
const ackWait = 10 * time.Second

func newMCPGoServer(probe *cancelProbe, acks <-chan struct{}) *mcpgoserver.MCPServer {
	s := mcpgoserver.NewMCPServer("interop-mcp-go", "v0", mcpgoserver.WithToolCapabilities(false))
	progress := func(ctx context.Context, req mcpgo.CallToolRequest, params map[string]any) error {
		if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
			return nil
		}
		params["progressToken"] = req.Params.Meta.ProgressToken
		return mcpgoserver.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress", params)
	}
	s.AddTool(mcpgo.NewTool(echoTool, mcpgo.WithDescription("answers its text"), mcpgo.WithString("text", mcpgo.Required())),
		func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultText(req.GetString("text", "")), nil
		})
	s.AddTool(mcpgo.NewTool(progressTool, mcpgo.WithDescription("one progress notification a step"), mcpgo.WithNumber("steps", mcpgo.Required())),
		func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			n := req.GetInt("steps", 0)
			for i := 1; i <= n; i++ {
				if err := progress(ctx, req, map[string]any{"progress": i, "total": n}); err != nil {
					return nil, err
				}
				select {
				case <-acks:
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-time.After(ackWait):
					return mcpgo.NewToolResultError(fmt.Sprintf("the client did not receive progress %d of %d", i, n)), nil
				}
			}
			return mcpgo.NewToolResultText("done"), nil
		})
	s.AddTool(mcpgo.NewTool(slowTool, mcpgo.WithDescription("waits for its cancellation")),
		func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			err := runSlow(ctx, probe, func() error {
				return progress(ctx, req, map[string]any{"progress": 1, "message": "started"})
			})
			if err != nil {
				return nil, err
			}
			return mcpgo.NewToolResultText("finished"), nil
		})
	return s
}

// mcpGoDual is mcp-go's Streamable HTTP server serving 2026-07-28 and the
// 2025 revisions on one endpoint: the era is chosen per request.
func mcpGoDual(t *testing.T) *peerServer {
	probe, acks := newCancelProbe(), make(chan struct{}, 16)
	h := mcpgoserver.NewStreamableHTTPServer(newMCPGoServer(probe, acks),
		mcpgoserver.WithStreamableHTTPProtocolVersions("2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"))
	p := goPeer(t, client.URL(serveHTTP(t, "/mcp", h)), probe)
	p.received = acks
	return p
}

// mcpGoSSE is mcp-go's HTTP+SSE server (2024-11-05 transport); its
// endpoint event names the message path relative to the server.
func mcpGoSSE(t *testing.T) *peerServer {
	probe, acks := newCancelProbe(), make(chan struct{}, 16)
	s := mcpgoserver.NewSSEServer(newMCPGoServer(probe, acks))
	u := serveHTTP(t, "/", s)
	t.Cleanup(s.CloseSessions) // before the listener closes: cleanups run last first
	p := goPeer(t, client.URL(u+"sse"), probe)
	p.received = acks
	return p
}

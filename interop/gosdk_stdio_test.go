package interop_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anymcp/anymcp/client"
)

// go-sdk over stdio: this test binary, started again by anymcp, serves
// the go-sdk server of gosdk_test.go on its stdin and stdout when its
// environment says so.

const (
	// envGoSDKStdio makes the binary a go-sdk stdio server: "modern"
	// (2026-07-28 only), "legacy" (the 2025 revisions only) or "default"
	// (every revision go-sdk knows).
	envGoSDKStdio = "ANYMCP_INTEROP_GOSDK_STDIO"
	// envStartDelay holds the server back this long before it reads its
	// input: a server that starts slowly, as one run through npx or uvx
	// does while it downloads.
	envStartDelay = "ANYMCP_INTEROP_START_DELAY"
)

// serveGoSDKStdioFromEnv serves go-sdk over stdio and exits when the
// environment asks for it; otherwise it returns at once.
func serveGoSDKStdioFromEnv() {
	mode := os.Getenv(envGoSDKStdio)
	if mode == "" {
		return
	}
	if d, err := time.ParseDuration(os.Getenv(envStartDelay)); err == nil {
		time.Sleep(d) // the slow start this server is asked to have
	}
	var versions []string
	switch mode {
	case "modern":
		versions = []string{"2026-07-28"}
	case "legacy":
		versions = []string{"2025-11-25", "2025-06-18", "2025-03-26"}
	}
	probe := newCancelProbe()
	s := newGoSDKServer(versions, probe)
	// The test asks the server process, through this tool, whether its slow
	// call saw the cancellation.
	gosdk.AddTool(s, &gosdk.Tool{Name: "cancelled", Description: "waits until a slow call saw its cancellation"},
		func(ctx context.Context, req *gosdk.CallToolRequest, _ slowIn) (*gosdk.CallToolResult, any, error) {
			if err := probe.wait(ctx, nil); err != nil {
				return text("not seen: " + err.Error()), nil, nil
			}
			return text("seen"), nil, nil
		})
	if err := s.Run(context.Background(), &gosdk.StdioTransport{}); err != nil && !strings.Contains(err.Error(), "EOF") {
		fmt.Fprintln(os.Stderr, "go-sdk stdio server:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// goSDKStdio is go-sdk's server over stdio in mode, answering after
// delay; anymcp starts it.
func goSDKStdio(mode string, delay time.Duration) func(t *testing.T) *peerServer {
	return func(t *testing.T) *peerServer {
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		mark := newMark(t)
		target := client.Command(self).WithEnv(envGoSDKStdio+"="+mode, envStartDelay+"="+delay.String(), markVar+"="+mark)
		return &peerServer{
			target: target, tools: goTools, mark: mark, stop: func() error { return nil },
			sawCancel: func(ctx context.Context, conn *client.Conn) error {
				res, err := conn.CallTool(ctx, "cancelled", map[string]any{})
				if err != nil {
					return fmt.Errorf("asking the server: %w", err)
				}
				if len(res.Content) == 0 || res.Content[0].Text != "seen" {
					return fmt.Errorf("the server's handler never saw the cancellation (%+v)", res.Content)
				}
				return nil
			},
		}
	}
}

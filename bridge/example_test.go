package bridge_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"github.com/anymcp/anymcp/bridge"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

// A bridge in front of an initialize-era server, reached by a client that
// speaks revision 2026-07-28 only.
func Example() {
	ctx := context.Background()
	upstream := testservers.StartStreamable(testservers.HTTPOptions{})
	defer upstream.Close()

	b, err := bridge.New(ctx, bridge.DialTarget(client.URL(upstream.URL)), bridge.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()
	defer b.Close()

	conn, err := client.Dial(ctx, client.URL(srv.URL+"/mcp"), client.WithProtocolVersion(mcp.LatestStatelessVersion))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	res, err := conn.CallTool(ctx, "echo", map[string]any{"text": "hello through the bridge"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(conn.Info().ProtocolVersion, res.Content[0].Text)
	// Output: 2026-07-28 hello through the bridge
}

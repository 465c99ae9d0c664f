package gateway

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/anymcp/anymcp/bridge"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/fleet"
	"github.com/anymcp/anymcp/gateway"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/testservers"
)

// BenchmarkGatewayOwnCost: one client calls echo, one call at a time,
// with -benchmem, all in this process over loopback: on a stateless
// testservers upstream directly ("direct"), through a bridge.Bridge's
// Handler in front of it ("bridge"), and through a gateway.Gateway's
// Handler in front of it, as the one server of its fleet ("gateway").
// Allocations are the whole process's. bridge − direct is what one more
// hop costs (an HTTP exchange, the bridge's handler, its upstream Conn);
// gateway − bridge is the gateway's own layers: access, view, approvals,
// the fleet's routing.
func BenchmarkGatewayOwnCost(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	up := testservers.StartStateless(testservers.HTTPOptions{})
	defer up.Close()

	br, err := bridge.New(ctx, bridge.DialTarget(client.URL(up.URL)), bridge.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer br.Close()
	brSrv := httptest.NewServer(br.Handler())
	defer brSrv.Close()

	g, err := gateway.New(ctx, []fleet.Server{{Name: "up", Target: client.URL(up.URL)}}, gateway.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	gwSrv := httptest.NewServer(g.Handler())
	defer gwSrv.Close()

	for _, side := range []struct{ name, url, tool string }{
		{"direct", up.URL, "echo"},
		{"bridge", brSrv.URL + "/mcp", "echo"},
		{"gateway", gwSrv.URL + "/mcp", "up__echo"},
	} {
		b.Run(side.name, func(b *testing.B) {
			conn, err := client.Dial(ctx, client.URL(side.url), client.WithEra(negotiate.StatelessOnly))
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			args := json.RawMessage(`{"text":"hello"}`)
			res, err := conn.CallTool(ctx, side.tool, args) // set-up is no part of a call
			if err != nil || res.IsError || len(res.Content) == 0 || res.Content[0].Text != "hello" {
				b.Fatalf("%s: the first call: %+v, %v", side.name, res, err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := conn.CallTool(ctx, side.tool, args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

package gateway_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/fleet"
	"github.com/anymcp/anymcp/gateway"
	"github.com/anymcp/anymcp/testservers"
)

// Two servers of different eras served as one: a client lists their
// tools under fleet names and calls one.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	files := testservers.StartStreamable(testservers.HTTPOptions{}) // 2025-11-25
	defer files.Close()
	search := testservers.StartLegacy(testservers.LegacyOptions{}) // 2024-11-05, HTTP+SSE
	defer search.Close()

	g, err := gateway.New(ctx, []fleet.Server{
		{Name: "files", Target: client.URL(files.URL)},
		{Name: "search", Target: client.URL(search.URL)},
	}, gateway.Config{})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(g.Handler())
	defer srv.Close()
	defer g.Close()

	conn, err := client.Dial(ctx, client.URL(srv.URL+"/mcp"))
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	tools, err := conn.AllTools(ctx)
	if err != nil {
		panic(err)
	}
	for _, t := range tools {
		if strings.HasSuffix(t.Name, "__echo") {
			fmt.Println(t.Name)
		}
	}
	res, err := conn.CallTool(ctx, "search__echo", map[string]any{"text": "found"})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Content[0].Text)
	// Output:
	// files__echo
	// search__echo
	// found
}

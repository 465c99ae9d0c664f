package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"testing"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/testservers"
)

// RawTools leaves out the tools that Tools leaves out: those whose
// x-mcp-header annotations break the rules (revision 2026-07-28 over
// Streamable HTTP), and keeps the same others.
func TestRawToolsLeavesOutWhatToolsDoes(t *testing.T) {
	hs := testservers.StartStateless(testservers.HTTPOptions{Options: testservers.Options{InvalidHeaderTools: true}})
	defer hs.Close()
	c := dialT(t, client.URL(hs.URL))
	typed, err := c.AllTools(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	var raw []string
	for r, err := range c.RawTools(ctxT(t)) {
		if err != nil {
			t.Fatal(err)
		}
		var tl struct{ Name string }
		if err := json.Unmarshal(r, &tl); err != nil {
			t.Fatal(err)
		}
		raw = append(raw, tl.Name)
	}
	if len(raw) != len(typed) {
		t.Fatalf("RawTools listed %d tools, Tools %d", len(raw), len(typed))
	}
	for i, tl := range typed {
		if raw[i] != tl.Name {
			t.Errorf("tool %d: RawTools %q, Tools %q", i, raw[i], tl.Name)
		}
	}
	for _, bad := range testservers.InvalidHeaderToolNames() {
		for _, n := range raw {
			if n == bad {
				t.Errorf("invalid tool %q kept", bad)
			}
		}
	}
}

// Print each tool as the server sent it: members in its order, members
// this module does not know kept.
func ExampleConn_RawTools() {
	srv := testservers.StartStreamable(testservers.HTTPOptions{Options: testservers.Options{PageSize: 2}})
	defer srv.Close()
	ctx := context.Background()
	conn, err := client.Dial(ctx, client.URL(srv.URL))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	for raw, err := range conn.RawTools(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		var tool struct{ Name string }
		if err := json.Unmarshal(raw, &tool); err != nil {
			log.Fatal(err)
		}
		if tool.Name == "add" {
			fmt.Println(string(raw)[:60])
		}
	}
	// Output:
	// {"name":"add","title":"Add","description":"Adds two numbers;
}

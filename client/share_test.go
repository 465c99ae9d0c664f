package client_test

import (
	"strings"
	"testing"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/testservers"
)

// A large string of a result shares the memory of the message it came in
// (jsondec.UnmarshalOwned), so a transport must never write to a message's
// buffer again: over every transport, three large results in a row leave
// each earlier one as it was received.
func TestLargeResultsKeepTheirBytes(t *testing.T) {
	check := func(t *testing.T, c *client.Conn) {
		ctx := ctxT(t)
		const n = 1<<20 + 1<<10 // above jsondec.ShareMin, and most of its message
		var got, kept []string
		for _, ch := range "abc" {
			res, err := c.CallTool(ctx, "echo", map[string]string{"text": strings.Repeat(string(ch), n)})
			if err != nil {
				t.Fatal(err)
			}
			s := text(t, res)
			if strings.Count(s, string(ch)) != n {
				t.Fatalf("echo of %d %q: %d of them in %d bytes", n, ch, strings.Count(s, string(ch)), len(s))
			}
			got, kept = append(got, s), append(kept, strings.Clone(s))
		}
		for i := range got {
			if got[i] != kept[i] {
				t.Errorf("result %d changed after later calls", i)
			}
		}
	}
	eachServer(t, testservers.Options{}, func(t *testing.T, s server) {
		check(t, dial(t, s))
	})
	for _, h := range []struct {
		name string
		o    testservers.HTTPOptions
	}{
		{"2026-http-json", testservers.HTTPOptions{JSONResponse: true}},
		{"2026-http-sse", testservers.HTTPOptions{}},
	} {
		t.Run(h.name, func(t *testing.T) {
			hs := testservers.StartStateless(h.o)
			t.Cleanup(hs.Close)
			c := dialT(t, client.URL(hs.URL))
			if c.Info().Era != mcp.EraStateless {
				t.Fatalf("era %v", c.Info().Era)
			}
			check(t, c)
		})
	}
}

package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/testservers"
)

// heard makes a fleet option that reports each server whose Conn heard
// a change, on the returned channel.
func heard() (Option, <-chan string) {
	ch := make(chan string, 64)
	return func(o *options) {
		o.onHeard = func(server string, _ kind) {
			select {
			case ch <- server:
			default:
			}
		}
	}, ch
}

func waitHeard(ctx context.Context, t *testing.T, ch <-chan string, server string) {
	t.Helper()
	for {
		select {
		case s := <-ch:
			if s == server {
				return
			}
		case <-ctx.Done():
			t.Fatalf("%s: no change heard", server)
		}
	}
}

func toolLists(s *testservers.Server) int { return s.Stats().Requests["tools/list"] }

// The tools of the catalogue carry the schemas as the server sent them:
// the same bytes as on the wire.
func TestSchemasByteForByte(t *testing.T) {
	for _, era := range []string{"initialize", "stateless"} {
		t.Run(era, func(t *testing.T) {
			start := testservers.StartStreamable
			if era == "stateless" {
				start = testservers.StartStateless
			}
			srv := start(testservers.HTTPOptions{})
			defer srv.Close()
			var mu sync.Mutex
			wire := map[string][2]json.RawMessage{} // tool → input, output schema as received
			hook := client.WithMessageHook(func(sent bool, m *jsonrpc.Message) {
				if sent || len(m.Result) == 0 {
					return
				}
				var page struct {
					Tools []struct {
						Name         string          `json:"name"`
						InputSchema  json.RawMessage `json:"inputSchema"`
						OutputSchema json.RawMessage `json:"outputSchema"`
					} `json:"tools"`
				}
				if json.Unmarshal(m.Result, &page) != nil {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				for _, tl := range page.Tools {
					wire[tl.Name] = [2]json.RawMessage{bytes.Clone(tl.InputSchema), bytes.Clone(tl.OutputSchema)}
				}
			})
			f, err := New([]Server{{Name: "s", Target: client.URL(srv.URL), Options: []client.Option{hook}}})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cat, err := f.Tools(ctxT(t))
			if err != nil || len(cat.Errors) > 0 {
				t.Fatal(err, cat.Errors)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(cat.Tools) == 0 || len(cat.Tools) != len(wire) {
				t.Fatalf("%d tools in the catalogue, %d on the wire", len(cat.Tools), len(wire))
			}
			withOutput := 0
			for _, tl := range cat.Tools {
				w := wire[tl.Tool.Name]
				if !bytes.Equal(tl.Tool.InputSchema, w[0]) || !bytes.Equal(tl.Tool.OutputSchema, w[1]) {
					t.Errorf("%s: schemas\n%s\n%s\nwant the wire's\n%s\n%s", tl.Tool.Name, tl.Tool.InputSchema, tl.Tool.OutputSchema, w[0], w[1])
				}
				if len(w[1]) > 0 {
					withOutput++
				}
			}
			if withOutput == 0 {
				t.Error("no tool with an output schema: the test checks only input schemas")
			}
		})
	}
}

// An initialize-era server's listing is kept until the server says it
// changed, or re-initializes; a stateless server's as long as its ttlMs
// says (the Conn keeps it), and until it says it changed.
func TestCatalogueCache(t *testing.T) {
	t.Run("initialize list_changed", func(t *testing.T) {
		srv := testservers.StartStreamable(testservers.HTTPOptions{})
		defer srv.Close()
		checkRefresh(t, srv.Server(), client.URL(srv.URL))
	})
	t.Run("stateless list_changed", func(t *testing.T) {
		srv := testservers.StartStateless(testservers.HTTPOptions{Options: testservers.Options{CacheTTL: time.Hour}})
		defer srv.Close()
		checkRefresh(t, srv.Server(), client.URL(srv.URL))
	})
	t.Run("stateless ttl", func(t *testing.T) {
		const ttl = 20 * time.Millisecond
		srv := testservers.StartStateless(testservers.HTTPOptions{Options: testservers.Options{CacheTTLs: map[string]time.Duration{"tools/list": ttl}}})
		defer srv.Close()
		f, err := New([]Server{{Name: "s", Target: client.URL(srv.URL)}})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		asked := time.Now() // before the answer came
		mustTools(t, f)
		answered := time.Now() // after it came
		mustTools(t, f)
		if time.Since(asked) < ttl {
			if n := toolLists(srv.Server()); n != 1 {
				t.Errorf("%d listings within the ttl, want 1", n)
			}
		}
		// The event is the ttl running out: nothing but time makes it.
		time.Sleep(ttl - time.Since(answered) + time.Millisecond)
		mustTools(t, f)
		if n := toolLists(srv.Server()); n < 2 {
			t.Errorf("%d listings after the ttl ran out, want the server asked again", n)
		}
	})
	t.Run("stateless without ttl", func(t *testing.T) {
		srv := testservers.StartStateless(testservers.HTTPOptions{})
		defer srv.Close()
		f, err := New([]Server{{Name: "s", Target: client.URL(srv.URL)}})
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		mustTools(t, f)
		mustTools(t, f)
		if n := toolLists(srv.Server()); n != 2 {
			t.Errorf("%d listings, want 2: a listing without ttlMs is stale at once", n)
		}
	})
	t.Run("initialize re-initialized", func(t *testing.T) {
		srv := testservers.StartStreamable(testservers.HTTPOptions{})
		defer srv.Close()
		opt, changes := heard()
		f, err := New([]Server{{Name: "s", Target: client.URL(srv.URL)}}, opt)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cat := mustTools(t, f)
		mustTools(t, f)
		if n := toolLists(srv.Server()); n != 1 {
			t.Fatalf("%d listings, want 1 (kept)", n)
		}
		srv.ExpireAll()
		echo, _ := toolNamed(cat, "s", "echo")
		if _, err := f.CallTool(ctxT(t), echo.Name, map[string]any{"text": "x"}); err != nil {
			t.Fatal(err)
		}
		waitHeard(ctxT(t), t, changes, "s")
		mustTools(t, f)
		if n := toolLists(srv.Server()); n != 2 {
			t.Errorf("%d listings after the session was re-initialized, want 2", n)
		}
	})
}

// checkRefresh: listed once, kept, listed again after list_changed.
func checkRefresh(t *testing.T, srv *testservers.Server, target client.Target) {
	t.Helper()
	opt, changes := heard()
	f, err := New([]Server{{Name: "s", Target: target}}, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mustTools(t, f)
	mustTools(t, f)
	if n := toolLists(srv); n != 1 {
		t.Fatalf("%d listings, want 1 (kept)", n)
	}
	if _, err := srv.WaitStats(ctxT(t), func(s testservers.Stats) bool {
		return s.Requests["subscriptions/listen"] > 0 || s.Sessions > 0
	}); err != nil {
		t.Fatal(err)
	}
	// The stream that carries the notification (the GET stream, the
	// listen stream) opens after the dial, and the server tells of no
	// GET stream: try until a client was notified.
	for srv.NotifyToolsChanged() == 0 {
		select {
		case <-ctxT(t).Done():
			t.Fatal("no client to notify")
		case <-time.After(time.Millisecond):
		}
	}
	waitHeard(ctxT(t), t, changes, "s")
	mustTools(t, f)
	if n := toolLists(srv); n != 2 {
		t.Errorf("%d listings after list_changed, want 2", n)
	}
}

func mustTools(t *testing.T, f *Fleet) *Catalogue {
	t.Helper()
	cat, err := f.Tools(ctxT(t))
	if err != nil || len(cat.Errors) > 0 {
		t.Fatalf("Tools: %v %v", err, cat.Errors)
	}
	return cat
}

// asSentTools are tools as mcp.Tool would never encode them: members out
// of its order, annotations in server-filesystem's order, _meta keys
// unsorted, members mcp.Tool lacks, spaces and escapes.
var asSentTools = []string{
	`{"inputSchema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]},"name":"write_file","annotations":{"readOnlyHint":false,"idempotentHint":true,"destructiveHint":false,"openWorldHint":false},"description":"Create or overwrite a file.","_meta":{"zeta/last":1,"alpha/first":{"b":2,"a":1}},"x-vendor-extension":{"since":"2.1"}}`,
	`{ "title" : "Read <file> & more", "name":"read_file", "inputSchema":{"type":"object"}, "futureMember":[1,2,3], "execution":{"taskSupport":"optional"} }`,
}

// The catalogue keeps each tool as the server sent it (Raw, byte for
// byte), beside the decoded Tool, from a server of either era; a
// stateless server's Raw is the Conn's cached answer, shared by every
// listing it serves, not copied per listing.
func TestCatalogueRawAsSent(t *testing.T) {
	for _, era := range []string{"initialize", "stateless"} {
		t.Run(era, func(t *testing.T) {
			url := rawServer(t, era == "stateless", "["+strings.Join(asSentTools, ",")+"]")
			f, err := New([]Server{{Name: "fs", Target: client.URL(url)}})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			cat := mustTools(t, f)
			if len(cat.Tools) != len(asSentTools) {
				t.Fatalf("%d tools, want %d", len(cat.Tools), len(asSentTools))
			}
			byName := map[string]Tool{}
			for _, tl := range cat.Tools {
				byName[tl.Tool.Name] = tl
			}
			for _, sent := range asSentTools {
				var own struct{ Name string }
				if err := json.Unmarshal([]byte(sent), &own); err != nil {
					t.Fatal(err)
				}
				tl, ok := byName[own.Name]
				if !ok {
					t.Fatalf("%s: not in the catalogue", own.Name)
				}
				if string(tl.Raw) != sent {
					t.Errorf("%s: Raw\n%s\nwant as sent\n%s", own.Name, tl.Raw, sent)
				}
				if tl.Name != "fs__"+own.Name || tl.Server != "fs" || len(tl.Tool.InputSchema) == 0 {
					t.Errorf("%s: fleet name %q, server %q, schema %s", own.Name, tl.Name, tl.Server, tl.Tool.InputSchema)
				}
			}
			again := mustTools(t, f)
			for i := range cat.Tools {
				if unsafe.SliceData(again.Tools[i].Raw) != unsafe.SliceData(cat.Tools[i].Raw) {
					t.Errorf("%s: a second catalogue copied Raw", cat.Tools[i].Name)
				}
			}
		})
	}
}

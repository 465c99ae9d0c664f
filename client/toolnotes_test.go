package client

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/reqmeta"
	"github.com/anymcp/anymcp/jsonrpc"
)

// endlessTools is a stateless server's answers (2026-07-28, spoken to as over
// Streamable HTTP; instantTransport.result) whose tools/list never ends:
// every page holds perPage tools never listed before, named with nameLen
// bytes, each read-only and with one parameter mirrored into a header.
type endlessTools struct {
	perPage, nameLen int
	mu               sync.Mutex
	listed           int // tools listed so far
}

// newEndlessTools returns the fake transport that answers as endlessTools.
func newEndlessTools(perPage, nameLen int) *instantTransport {
	s := &endlessTools{perPage: perPage, nameLen: nameLen}
	t := newInstantTransport()
	t.result = s.result
	return t
}

// endlessName is the name of the i-th tool listed (from 1) with nameLen
// bytes.
func endlessName(i, nameLen int) string {
	n := fmt.Sprintf("t%d-", i)
	return n + strings.Repeat("x", max(nameLen-len(n), 0))
}

func (s *endlessTools) result(m *jsonrpc.Message) json.RawMessage {
	switch m.Method {
	case "server/discover":
		return []byte(discoverResult)
	case "tools/list":
		s.mu.Lock()
		first := s.listed + 1
		s.listed += s.perPage
		s.mu.Unlock()
		var b strings.Builder
		b.WriteString(`{"tools":[`)
		for i := range s.perPage {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"name":%q,"inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}},"annotations":{"readOnlyHint":true}}`, endlessName(first+i, s.nameLen))
		}
		b.WriteString(`],"nextCursor":"more"}`)
		return []byte(b.String())
	}
	return nil
}

// heldToolNotes counts what the Conn's tool notes hold, from the notes
// themselves: how many, and the bytes of their strings.
func heldToolNotes(c *Conn) (notes, strBytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.tools.byName) != c.tools.order.Len() {
		panic(fmt.Sprintf("tool notes: %d names, %d in order", len(c.tools.byName), c.tools.order.Len()))
	}
	for e := c.tools.order.Front(); e != nil; e = e.Next() {
		n := e.Value.(*toolNote)
		strBytes += len(n.name)
		for _, p := range n.params {
			strBytes += len(p.Name) + len(p.Type)
			for _, k := range p.Path {
				strBytes += len(k)
			}
		}
	}
	return c.tools.order.Len(), strBytes
}

// A server that lists tool after tool, each marked read-only and with a
// header parameter, does not grow what the Conn remembers of them past its
// bounds, however many listings the host walks and whatever their names'
// length; the tools listed last are the ones remembered, and they still
// count as safe to repeat and get their Mcp-Param-* headers.
func TestToolNotesBounded(t *testing.T) {
	for _, tc := range []struct {
		name    string
		nameLen int // 1 KiB names reach the byte bound first, short ones the count
	}{{"long names", 1 << 10}, {"short names", 16}} {
		t.Run(tc.name, func(t *testing.T) {
			const perPage, pages = 1000, 8
			srv := newEndlessTools(perPage, tc.nameLen)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			c, err := Open(ctx, srv, WithTransportName(TransportStreamableHTTP))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if !c.dialect().headers {
				t.Fatal("the Conn does not send request headers: the test needs modern over Streamable HTTP")
			}
			for listing := 1; listing <= 3; listing++ {
				seen, last := 0, ""
				for tool, err := range c.Tools(ctx) {
					if err != nil {
						t.Fatal(err)
					}
					seen, last = seen+1, tool.Name
					if seen == perPage*pages { // the host keeps none of them
						break
					}
				}
				notes, strBytes := heldToolNotes(c)
				t.Logf("listing %d: %d tools seen, %d remembered, %d bytes of strings", listing, seen, notes, strBytes)
				if notes > maxToolNotes || strBytes > maxToolNoteBytes {
					t.Fatalf("listing %d: the Conn remembers %d tools, %d bytes of strings: past its bounds (%d, %d)",
						listing, notes, strBytes, maxToolNotes, maxToolNoteBytes)
				}
				if notes == 0 {
					t.Fatalf("listing %d: nothing remembered", listing)
				}
				if !c.safeToRepeat("tools/call", []byte(fmt.Sprintf(`{"name":%q}`, last))) {
					t.Errorf("listing %d: the tool listed last is not safe to repeat", listing)
				}
				c.mu.Lock()
				ps := c.tools.params(last)
				c.mu.Unlock()
				if len(ps) != 1 || ps[0].Name != "Region" {
					t.Errorf("listing %d: the tool listed last has header parameters %v, want Region", listing, ps)
				}
			}
			if c.safeToRepeat("tools/call", []byte(fmt.Sprintf(`{"name":%q}`, endlessName(1, tc.nameLen)))) {
				t.Error("the tool listed first is still remembered")
			}
		})
	}
}

// The notes keep the tools listed last: a tool listed again moves to the
// back, a tool with nothing to remember is dropped, and a note bigger than
// the byte bound by itself is not kept (and takes no other note with it).
func TestToolNotesOrder(t *testing.T) {
	var n toolNotes
	region := []reqmeta.ParamHeader{{Name: "Region", Path: []string{"region"}, Type: "string"}}
	for i := range maxToolNotes {
		if n.set(fmt.Sprint(i), true, nil, "") {
			t.Fatalf("tool %d: a tool forgotten before the bound", i)
		}
	}
	n.set("0", true, region, "") // listed again: now the last
	if !n.set("new", true, nil, "") {
		t.Error("a tool past the count bound forgot nothing")
	}
	if n.safe("1") || !n.safe("0") || len(n.params("0")) != 1 || !n.safe("new") {
		t.Errorf("after one past the bound: 1 %v, 0 %v %v, new %v; want the tool listed longest ago (1) forgotten",
			n.safe("1"), n.safe("0"), n.params("0"), n.safe("new"))
	}
	if n.order.Len() != maxToolNotes {
		t.Errorf("%d notes, want %d", n.order.Len(), maxToolNotes)
	}
	n.set("0", false, nil, "") // no longer safe, no headers: nothing to remember
	if _, ok := n.byName["0"]; ok || n.order.Len() != maxToolNotes-1 {
		t.Errorf("a tool with nothing to remember is kept (%d notes)", n.order.Len())
	}
	before, bytes := n.order.Len(), n.bytes
	if !n.set(strings.Repeat("h", maxToolNoteBytes), true, nil, "") {
		t.Error("a note over the byte bound is reported kept")
	}
	if n.order.Len() != before || n.bytes != bytes {
		t.Errorf("a note over the byte bound changed the notes: %d, %d bytes; were %d, %d", n.order.Len(), n.bytes, before, bytes)
	}
	big := strings.Repeat("b", maxToolNoteBytes/2)
	n.set(big, true, nil, "")
	if !n.safe(big) || n.bytes > maxToolNoteBytes {
		t.Errorf("a note of half the byte bound: kept %v, %d bytes", n.safe(big), n.bytes)
	}
	sum := 0
	for e := n.order.Front(); e != nil; e = e.Next() {
		note := e.Value.(*toolNote)
		sum += noteSize(note.name, note.params)
	}
	if sum != n.bytes {
		t.Errorf("the notes' sizes add up to %d, counted %d", sum, n.bytes)
	}
}

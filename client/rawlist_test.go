package client

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/anymcp/anymcp/jsonrpc"
)

// within reports whether b's bytes lie inside one of the buffers.
func within(b []byte, bufs ...[]byte) bool {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	for _, buf := range bufs {
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
		if len(b) > 0 && p >= lo && p+uintptr(len(b)) <= lo+uintptr(len(buf)) {
			return true
		}
	}
	return false
}

// oddTools are tools as no Go struct encodes them: members out of
// mcp.Tool's order, annotations in an order of their own, _meta keys
// unsorted, members mcp.Tool lacks, spaces, escapes.
var oddTools = []string{
	`{"inputSchema":{"type":"object","properties":{"b":{"type":"string"},"a":{}}},"name":"read","annotations":{"readOnlyHint":true,"idempotentHint":true,"destructiveHint":false},"_meta":{"z/last":1,"a/first":2},"x-vendor":{"k":[1,2]}}`,
	`{ "name" : "write\u00e9", "description":"<b>&amp;</b>", "execution":{"taskSupport":"required"}, "inputSchema" : {"type":"object"} , "futureMember":null }`,
}

// RawTools yields each tool as the server sent it, byte for byte, over
// every page, as slices of the answers rather than copies; the Conn notes
// what each tool says about calls to it, as Tools does.
func TestRawToolsAsSent(t *testing.T) {
	var mu sync.Mutex
	var answers [][]byte
	srv := newInstantTransport()
	srv.result = func(m *jsonrpc.Message) json.RawMessage {
		if m.Method != "tools/list" {
			return nil
		}
		page := `{"tools":[` + oddTools[0] + `],"nextCursor":"2"}`
		if strings.Contains(string(m.Params), `"2"`) {
			page = `{"tools":[` + oddTools[1] + `]}`
		}
		mu.Lock()
		defer mu.Unlock()
		answers = append(answers, []byte(page))
		return answers[len(answers)-1]
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Open(ctx, srv)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got []json.RawMessage
	for raw, err := range c.RawTools(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, raw)
	}
	if len(got) != len(oddTools) {
		t.Fatalf("%d tools, want %d", len(got), len(oddTools))
	}
	mu.Lock()
	defer mu.Unlock()
	for i, raw := range got {
		if string(raw) != oddTools[i] {
			t.Errorf("tool %d:\n%s\nwant as sent:\n%s", i, raw, oddTools[i])
		}
		if !within(raw, answers...) {
			t.Errorf("tool %d is a copy, not the answer's bytes", i)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.tools.safe("read") || c.tools.taskSupport("write\u00e9") != "required" {
		t.Error("the Conn did not note what the raw listing said of the tools")
	}
}

// The raw and typed listings share the cache: a cached page serves both,
// and the raw items of two listings are the same bytes, the cache's.
func TestRawListingSharesCache(t *testing.T) {
	c, p := openStateless(t)
	go func() {
		m := p.expect("tools/list")
		p.reply(m.ID, `{"resultType":"complete","ttlMs":600000,"tools":[`+oddTools[0]+`]}`)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if tools, err := c.AllTools(ctx); err != nil || len(tools) != 1 {
		t.Fatalf("AllTools: %v %v", tools, err)
	}
	var lists [2][]json.RawMessage
	for i := range lists {
		for raw, err := range c.RawTools(ctx) { // from the cache: the peer answers one listing only
			if err != nil {
				t.Fatalf("listing %d: %v", i, err)
			}
			lists[i] = append(lists[i], raw)
		}
	}
	if len(lists[0]) != 1 || string(lists[0][0]) != oddTools[0] {
		t.Fatalf("raw listing %s, want the tool as sent", lists[0])
	}
	if len(lists[1]) != 1 || unsafe.SliceData(lists[0][0]) != unsafe.SliceData(lists[1][0]) {
		t.Error("two raw listings from the cache gave copies, not the cache's bytes")
	}
}

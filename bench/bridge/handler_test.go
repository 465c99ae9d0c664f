package bridge

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/bridge"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/testservers"
)

// BenchmarkHandler: one tools/call of echo as raw HTTP POSTs, everything
// in this process, with -benchmem: to the upstream directly ("direct"),
// and to the bridge's http.Handler in front of the same upstream
// ("bridge"). The bridge's own cost per call is bridge − direct, in time,
// bytes and allocations (its handler, its upstream Conn, one more HTTP
// exchange on loopback). Per face: stateless (2026-07-28) before a
// stateless upstream, and a session (2025-11-25) before an initialize-era
// one.
func BenchmarkHandler(b *testing.B) {
	b.Run("stateless", func(b *testing.B) {
		up := testservers.StartStateless(testservers.HTTPOptions{})
		defer up.Close()
		front := bridgeFront(b, up.URL)
		for _, r := range []struct{ name, url string }{{"direct", up.URL}, {"bridge", front}} {
			b.Run(r.name, func(b *testing.B) {
				rawCalls(b, &rawPeer{url: r.url, header: statelessHeader, body: statelessCall})
			})
		}
	})
	b.Run("session", func(b *testing.B) {
		up := testservers.StartStreamable(testservers.HTTPOptions{})
		defer up.Close()
		front := bridgeFront(b, up.URL)
		for _, r := range []struct{ name, url string }{{"direct", up.URL}, {"bridge", front}} {
			b.Run(r.name, func(b *testing.B) {
				p := &rawPeer{url: r.url, body: sessionCall}
				p.initialize(b)
				rawCalls(b, p)
			})
		}
	})
}

// BenchmarkHTTPFloor: the same POST as BenchmarkHandler's, answered by a
// handler that reads the body and writes a fixed answer. It is what one
// HTTP exchange on loopback costs net/http's client and server together,
// a floor no handler goes below: the bridge pays it once more than a
// direct call (its server side downstream, its client side upstream).
func BenchmarkHTTPFloor(b *testing.B) {
	answer := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hello"}]}}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header()["Content-Type"] = []string{"application/json"}
		_, _ = w.Write(answer)
	}))
	defer srv.Close()
	rawCalls(b, &rawPeer{url: srv.URL, header: statelessHeader, body: statelessCall})
}

// bridgeFront serves a bridge in front of upstream on an httptest server
// and returns its /mcp URL; both end with the benchmark.
func bridgeFront(b *testing.B, upstream string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	br, err := bridge.New(ctx, bridge.DialTarget(client.URL(upstream)), bridge.Options{})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(br.Handler())
	b.Cleanup(func() {
		srv.Close()
		br.Close()
	})
	return srv.URL + "/mcp"
}

const (
	// The calls' ids are numbered (%d): the bridge answers a request sent
	// again with an id it saw from its first answer, without the upstream.
	statelessCall = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}}}`
	sessionCall = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`
	initialize  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`
	initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

var statelessHeader = http.Header{
	"Mcp-Protocol-Version": {"2026-07-28"},
	"Mcp-Method":           {"tools/call"},
	"Mcp-Name":             {"echo"},
}

// rawPeer posts the same bytes every time but the id, as the floor of
// bench/sdkcompare does, and reads each answer to its end.
type rawPeer struct {
	url    string
	header http.Header
	body   string // with %d for the id
	hc     http.Client
	buf    bytes.Buffer
	req    []byte
}

// lastID numbers the calls of the whole run, so that no id comes twice.
var lastID atomic.Int64

// call posts the body with the next id.
func (p *rawPeer) call(ctx context.Context) error {
	p.req = fmt.Appendf(p.req[:0], p.body, lastID.Add(1)+10)
	_, err := p.postBytes(ctx, p.req)
	return err
}

func (p *rawPeer) post(ctx context.Context, body string) (*http.Response, error) {
	return p.postBytes(ctx, []byte(body))
}

func (p *rawPeer) postBytes(ctx context.Context, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range p.header {
		req.Header[k] = v
	}
	resp, err := p.hc.Do(req)
	if err != nil {
		return nil, err
	}
	p.buf.Reset()
	_, err = io.Copy(&p.buf, resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s: %s: %s", p.url, resp.Status, p.buf.String())
	}
	return resp, nil
}

// initialize opens a 2025-11-25 session and sends its later requests in
// it.
func (p *rawPeer) initialize(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := p.post(ctx, initialize)
	if err != nil {
		b.Fatal(err)
	}
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		b.Fatalf("%s: initialize gave no Mcp-Session-Id", p.url)
	}
	p.header = http.Header{"Mcp-Session-Id": {id}, "Mcp-Protocol-Version": {"2025-11-25"}}
	if _, err := p.post(ctx, initialized); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		req, _ := http.NewRequest(http.MethodDelete, p.url, nil)
		req.Header.Set("Mcp-Session-Id", id)
		if resp, err := p.hc.Do(req); err == nil {
			resp.Body.Close()
		}
		p.hc.CloseIdleConnections()
	})
}

func rawCalls(b *testing.B, p *rawPeer) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := p.call(ctx); err != nil { // a route's lazy set-up is no part of a call
		b.Fatal(err)
	}
	if !bytes.Contains(p.buf.Bytes(), []byte(`"hello"`)) {
		b.Fatalf("%s: the answer lacks the echo: %s", p.url, p.buf.String())
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := p.call(ctx); err != nil {
			b.Fatal(err)
		}
	}
	p.hc.CloseIdleConnections()
}

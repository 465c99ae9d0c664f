package legacy

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/anymcp/anymcp/httpopt"
	"github.com/anymcp/anymcp/jsonrpc"
)

// BenchmarkRoundTrip times one sequential tools/call: Send POSTs the
// request, a tiny HTTP+SSE echo server accepts it with 202 and writes a
// canned result on the stream, and Recv returns it.
func BenchmarkRoundTrip(b *testing.B) {
	params := []byte(`{"name":"echo","arguments":{"text":"hello, world"}}`)
	const result = `,"result":{"content":[{"type":"text","text":"hello, world"}],"isError":false}}` + "\n\n"
	out := make(chan []byte, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: endpoint\ndata: /message\n\n")
			w.(http.Flusher).Flush()
			for {
				select {
				case ev := <-out:
					w.Write(ev)
					w.(http.Flusher).Flush()
				case <-r.Context().Done():
					return
				}
			}
		}
		var buf [512]byte
		n, _ := io.ReadFull(r.Body, buf[:])
		ev := append(make([]byte, 0, 160), `event: message`+"\n"+`data: {"jsonrpc":"2.0","id":`...)
		ev = append(append(ev, benchID(buf[:n])...), result...)
		out <- ev
		w.WriteHeader(http.StatusAccepted)
	}))
	b.Cleanup(srv.Close)
	rt := &http.Transport{}
	b.Cleanup(rt.CloseIdleConnections)

	tr, err := Dial(context.Background(), srv.URL+"/sse", Options{Common: httpopt.Common{HTTPClient: &http.Client{Transport: rt}}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tr.Close() })
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range int64(b.N) {
		m := &jsonrpc.Message{ID: jsonrpc.Int(i + 1), Method: "tools/call", Params: params}
		if err := tr.Send(ctx, m); err != nil {
			b.Fatal(err)
		}
		resp, err := tr.Recv()
		if err != nil {
			b.Fatal(err)
		}
		if len(resp.Result) == 0 {
			b.Fatal("no result")
		}
	}
}

// benchID finds the id of a request without decoding it, so that the
// server's share of the round trip stays small.
func benchID(body []byte) []byte {
	const key = `"id":`
	i := bytes.Index(body, []byte(key))
	if i < 0 {
		return []byte("null")
	}
	rest := body[i+len(key):]
	return rest[:bytes.IndexAny(rest, ",}")]
}

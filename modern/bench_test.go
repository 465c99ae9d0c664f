package modern

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

// The benchmarks time one sequential tools/call round trip over loopback
// against a server that answers a canned result, so that the transport's
// own cost can be read as the difference to BenchmarkRawPOST, the same
// bytes POSTed with a bare net/http client.

var (
	benchParams = []byte(`{"name":"echo","arguments":{"text":"hello, world"}}`)
	benchResult = `{"content":[{"type":"text","text":"hello, world"}],"isError":false}`
)

// benchID finds the id of a request without decoding it, so that the
// server's share of each round trip stays small and the same everywhere.
func benchID(body []byte) []byte {
	const key = `"id":`
	i := bytes.Index(body, []byte(key))
	if i < 0 {
		return []byte("null")
	}
	rest := body[i+len(key):]
	end := bytes.IndexAny(rest, ",}")
	return rest[:end]
}

func benchServer(b *testing.B, sse bool) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf [512]byte
		n, _ := io.ReadFull(r.Body, buf[:])
		msg := append(append(append(make([]byte, 0, 256), `{"jsonrpc":"2.0","id":`...), benchID(buf[:n])...), `,"result":`+benchResult+`}`...)
		if sse {
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write(append(append([]byte("event: message\ndata: "), msg...), "\n\n"...))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(msg)
	}))
	b.Cleanup(s.Close)
	return s
}

func benchRoundTrip(b *testing.B, sse bool) {
	s := benchServer(b, sse)
	rt := &http.Transport{}
	b.Cleanup(rt.CloseIdleConnections)
	tr, err := New(s.URL, Options{Common: httpopt.Common{HTTPClient: &http.Client{Transport: rt}}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tr.Close() })
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range int64(b.N) {
		m := &jsonrpc.Message{ID: jsonrpc.Int(i + 1), Method: "tools/call", Params: benchParams}
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

func BenchmarkRoundTripJSON(b *testing.B) { benchRoundTrip(b, false) }
func BenchmarkRoundTripSSE(b *testing.B)  { benchRoundTrip(b, true) }

// BenchmarkRawPOST is the floor: the request's bytes POSTed with net/http
// and the answer read, nothing decoded.
func BenchmarkRawPOST(b *testing.B) {
	s := benchServer(b, false)
	rt := &http.Transport{}
	b.Cleanup(rt.CloseIdleConnections)
	client := &http.Client{Transport: rt}
	body, err := jsonrpc.Encode(&jsonrpc.Message{ID: jsonrpc.Int(1), Method: "tools/call", Params: benchParams})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		req, err := http.NewRequest(http.MethodPost, s.URL, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || len(got) == 0 {
			b.Fatal("no answer", err)
		}
	}
}

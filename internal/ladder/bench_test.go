package ladder_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/anymcp/anymcp/httpopt"
	"github.com/anymcp/anymcp/internal/ladder"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/testservers"
)

// dualHello opens as a dual-era client does: the stateless probe first.
func dualHello() ladder.Hello {
	h := initializeHello()
	h.Discover = func(version string) *jsonrpc.Message {
		params, _ := json.Marshal(map[string]any{"_meta": map[string]any{
			mcp.MetaProtocolVersion: version, mcp.MetaClientCapabilities: map[string]any{},
			mcp.MetaClientInfo: mcp.Implementation{Name: "bench", Version: "0"}}})
		return &jsonrpc.Message{ID: jsonrpc.Int(1), Method: "server/discover", Params: params}
	}
	return h
}

// benchNegotiate measures Connect until the opening request is answered
// (then closes the transport), reporting the HTTP round trips it took
// (the DELETE that ends an initialize-era session included).
func benchNegotiate(b *testing.B, url string, cache *negotiate.Cache) {
	var trips atomic.Int64
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		trips.Add(1)
		return http.DefaultTransport.RoundTrip(r)
	})}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := ladder.Connect(ctx, url, dualHello(), ladder.Config{Common: httpopt.Common{HTTPClient: hc}, Cache: cache})
		if err != nil {
			b.Fatal(err)
		}
		res.Transport.Close()
	}
	b.ReportMetric(float64(trips.Load())/float64(b.N), "roundtrips/op")
}

// A 2026-07-28 server: server/discover, answered.
func BenchmarkNegotiateStateless(b *testing.B) {
	srv := testservers.StartStateless(testservers.HTTPOptions{})
	defer srv.Close()
	benchNegotiate(b, srv.URL, nil)
}

// A 2025-11-25 Streamable HTTP server: the probe refused, then initialize.
func BenchmarkNegotiateStreamableCold(b *testing.B) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{NoGETStream: true})
	defer srv.Close()
	benchNegotiate(b, srv.URL, nil)
}

// The same with its era cached: initialize at once.
func BenchmarkNegotiateStreamableCached(b *testing.B) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{NoGETStream: true})
	defer srv.Close()
	cache := negotiate.NewCache(0)
	cache.Store(srv.URL, negotiate.StreamableHTTP, mcp.EraInitialize)
	benchNegotiate(b, srv.URL, cache)
}

// A 2024-11-05 HTTP+SSE server: the probe and initialize refused (405),
// then the GET stream and initialize over it.
func BenchmarkNegotiateLegacyCold(b *testing.B) {
	srv := testservers.StartStatus(testservers.StatusOptions{PostStatus: 405, GETServesLegacy: true})
	defer srv.Close()
	benchNegotiate(b, srv.URL, nil)
}

// The same with its era and transport cached: the GET at once.
func BenchmarkNegotiateLegacyCached(b *testing.B) {
	srv := testservers.StartStatus(testservers.StatusOptions{PostStatus: 405, GETServesLegacy: true})
	defer srv.Close()
	cache := negotiate.NewCache(0)
	cache.Store(srv.URL, negotiate.SSE, mcp.EraInitialize)
	benchNegotiate(b, srv.URL, cache)
}

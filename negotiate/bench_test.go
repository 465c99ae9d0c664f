package negotiate_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/testservers"
)

// benchNegotiate measures Connect until initialize is answered (then closes
// the transport), reporting the HTTP round trips it took.
func benchNegotiate(b *testing.B, url string, cache *negotiate.Cache) {
	var trips atomic.Int64
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		trips.Add(1)
		return http.DefaultTransport.RoundTrip(r)
	})}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := negotiate.Connect(ctx, url, legacyHello(), negotiate.Config{HTTPClient: hc, Cache: cache})
		if err != nil {
			b.Fatal(err)
		}
		res.Transport.Close()
	}
	b.ReportMetric(float64(trips.Load())/float64(b.N), "roundtrips/op")
}

func BenchmarkNegotiateModern(b *testing.B) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{NoGETStream: true})
	defer srv.Close()
	benchNegotiate(b, srv.URL, nil)
}

func BenchmarkNegotiateLegacyCold(b *testing.B) {
	srv := testservers.StartStatus(testservers.StatusOptions{PostStatus: 405, GETServesLegacy: true})
	defer srv.Close()
	benchNegotiate(b, srv.URL, nil)
}

func BenchmarkNegotiateLegacyCached(b *testing.B) {
	srv := testservers.StartStatus(testservers.StatusOptions{PostStatus: 405, GETServesLegacy: true})
	defer srv.Close()
	cache := negotiate.NewCache(0)
	cache.Store(srv.URL, negotiate.SSE, mcp.EraLegacy)
	benchNegotiate(b, srv.URL, cache)
}

package client_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/testservers"
)

// idleServers are the HTTP servers an idle Conn is measured against: the
// initialize-era HTTP+SSE stream, Streamable HTTP (2025-11-25) and 2026-07-28.
var idleServers = []struct {
	name  string
	start func() (url string, stop func())
}{
	{"legacy", func() (string, func()) {
		s := testservers.StartLegacy(testservers.LegacyOptions{})
		return s.URL, s.Close
	}},
	{"streamable", func() (string, func()) {
		s := testservers.StartStreamable(testservers.HTTPOptions{})
		return s.URL, s.Close
	}},
	{"stateless", func() (string, func()) {
		s := testservers.StartStateless(testservers.HTTPOptions{})
		return s.URL, s.Close
	}},
}

// BenchmarkIdleConnHeap reports the heap an idle connection holds, per
// connection, over 50 connections to one server: the initialize-era HTTP+SSE
// stream, and Streamable HTTP with its GET stream.
func BenchmarkIdleConnHeap(b *testing.B) {
	for _, tc := range idleServers {
		b.Run(tc.name, func(b *testing.B) {
			url, stop := tc.start()
			defer stop()
			const n = 50
			var perConn float64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				conns := make([]*client.Conn, n)
				for i := range conns {
					c, err := client.Dial(context.Background(), client.URL(url))
					if err != nil {
						b.Fatal(err)
					}
					conns[i] = c
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				perConn = float64(after.HeapInuse-before.HeapInuse) / n
				for _, c := range conns {
					c.Close()
				}
			}
			b.ReportMetric(perConn/1024, "KiB/conn")
		})
	}
}

package fleet

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
)

// BenchmarkCatalogueHeapPerTool reports the live heap each listed tool
// costs a fleet: one server listing 400 tools of about 800 bytes
// (manyTools) against one listing none, with the fleet's catalogue kept
// (and, for a stateless server, the Conn's cached page), after a GC. Each
// is the median of its runs, each run started once the goroutines of the
// run before (a closed fleet's) are gone.
func BenchmarkCatalogueHeapPerTool(b *testing.B) {
	const n = 400
	for _, era := range []string{"initialize", "stateless"} {
		b.Run(era, func(b *testing.B) {
			stateless := era == "stateless"
			full, empty := rawServer(b, stateless, manyTools(n)), rawServer(b, stateless, "[]")
			base := 0
			heap := func(url string, want int) int64 {
				for deadline := time.Now().Add(time.Second); runtime.NumGoroutine() > base && time.Now().Before(deadline); {
					time.Sleep(time.Millisecond) // waits for a closed fleet's goroutines to end
				}
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				f, err := New([]Server{{Name: "s", Target: client.URL(url)}})
				if err != nil {
					b.Fatal(err)
				}
				defer f.Close()
				cat, err := f.Tools(context.Background())
				if err != nil || len(cat.Errors) > 0 || len(cat.Tools) != want {
					b.Fatal(err, cat.Errors, len(cat.Tools))
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				runtime.KeepAlive(cat)
				return int64(after.HeapAlloc) - int64(before.HeapAlloc)
			}
			heap(full, n) // warm up: the servers' goroutines, the pools
			base = runtime.NumGoroutine()
			var h0, hn []int64
			for b.Loop() {
				for range 5 {
					h0 = append(h0, heap(empty, 0))
					hn = append(hn, heap(full, n))
				}
			}
			slices.Sort(h0)
			slices.Sort(hn)
			b.ReportMetric(float64(hn[len(hn)/2]-h0[len(h0)/2])/n, "B/tool")
			b.ReportMetric(float64(len(manyTools(n)))/n, "wireB/tool")
		})
	}
}

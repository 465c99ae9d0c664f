package llm

import (
	"testing"

	"github.com/anymcp/anymcp/mcp"
)

// BenchmarkConvert converts 1,000 tools (the real servers' tools of the
// corpus, repeated) for each target. One op is the whole set.
func BenchmarkConvert(b *testing.B) {
	var real []mcp.Tool
	for _, ct := range loadCorpus(b) {
		if ct.server != "hard" {
			real = append(real, ct.tool)
		}
	}
	tools := make([]mcp.Tool, 1000)
	for i := range tools {
		tools[i] = real[i%len(real)]
	}
	for _, target := range allTargets {
		name := string(target.Provider)
		if target.Strict {
			name += "/strict"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ConvertAll(nil, tools, target)
			}
		})
	}
}

package docs

import (
	"strings"
	"testing"
)

// TestNoGRPCInMCPCall: mcpcall exports OTLP over http/protobuf only. The
// gRPC exporters were most of a newcomer's first build (`go run
// ./cmd/mcpcall demo` from empty caches, docs/benchmarks.md), so neither
// mcpcall's go.mod nor the library's may require them again, and the
// library's go.mod requires no OpenTelemetry or gRPC module at all.
func TestNoGRPCInMCPCall(t *testing.T) {
	for _, tc := range []struct {
		gomod   string
		refused []string // module paths, or prefixes ending in "/"
	}{
		{"cmd/mcpcall/go.mod", []string{
			"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc",
			"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc",
			"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc",
		}},
		{"go.mod", []string{"go.opentelemetry.io/", "google.golang.org/grpc"}},
	} {
		for _, mod := range required(t, tc.gomod) {
			for _, bad := range tc.refused {
				if mod == bad || (strings.HasSuffix(bad, "/") && strings.HasPrefix(mod, bad)) {
					t.Errorf("%s requires %s", tc.gomod, mod)
				}
			}
		}
	}
}

// required lists the module paths a go.mod requires, direct or indirect.
func required(t *testing.T, gomod string) []string {
	t.Helper()
	var mods []string
	block := false
	for _, line := range strings.Split(string(read(t, gomod)), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "require (":
			block = true
		case block && line == ")":
			block = false
		case block && line != "" && !strings.HasPrefix(line, "//"):
			mods = append(mods, strings.Fields(line)[0])
		case strings.HasPrefix(line, "require "):
			mods = append(mods, strings.Fields(line)[1])
		}
	}
	if len(mods) == 0 {
		t.Fatalf("%s requires nothing: not read right", gomod)
	}
	return mods
}

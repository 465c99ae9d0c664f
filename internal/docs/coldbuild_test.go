package docs

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoGRPCInMCPCall: mcpcall exports OTLP/HTTP as JSON with exporters of
// its own. The OTLP exporters, protobuf and gRPC were most of a newcomer's
// first build (`go run ./cmd/mcpcall demo` from empty caches,
// docs/benchmarks.md), so mcpcall builds none of them: neither its go.mod
// nor its packages (`go list -deps`) name them. The library's go.mod
// requires no OpenTelemetry or gRPC module at all.
func TestNoGRPCInMCPCall(t *testing.T) {
	refused := []string{"google.golang.org/protobuf", "google.golang.org/grpc", "google.golang.org/genproto",
		"go.opentelemetry.io/proto/", "go.opentelemetry.io/otel/exporters/", "github.com/grpc-ecosystem/"}
	bad := func(path string) bool {
		for _, r := range refused {
			if path == r || strings.HasPrefix(path, strings.TrimSuffix(r, "/")+"/") {
				return true
			}
		}
		return false
	}
	for _, mod := range required(t, "cmd/mcpcall/go.mod") {
		if bad(mod) {
			t.Errorf("cmd/mcpcall/go.mod requires %s", mod)
		}
	}
	if testing.Short() {
		return
	}
	cmd := exec.Command("go", "list", "-deps", "./cmd/mcpcall")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/mcpcall: %v", err)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 100 {
		t.Fatalf("go list -deps ./cmd/mcpcall listed %d packages: not read right", len(pkgs))
	}
	for _, p := range pkgs {
		if bad(p) {
			t.Errorf("mcpcall builds %s", p)
		}
	}
}

// TestLibraryGoModLean: the library's go.mod requires no OpenTelemetry or
// gRPC module.
func TestLibraryGoModLean(t *testing.T) {
	for _, tc := range []struct {
		gomod   string
		refused []string // module paths, or prefixes ending in "/"
	}{
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

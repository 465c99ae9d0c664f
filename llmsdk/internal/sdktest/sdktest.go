// Package sdktest holds what the adapters' tests share: the corpus of
// real and hard tool schemas of package llm's tests, and a look into a
// recorded request. Tests only.
package sdktest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/anymcp/anymcp/mcp"
)

// Corpus returns the tools of llm/testdata: every server this repository
// tests against, and the hand-written hard schemas.
func Corpus(t testing.TB) []mcp.Tool {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "llm", "testdata")
	var real struct {
		Servers []struct {
			Tools []mcp.Tool `json:"tools"`
		} `json:"servers"`
	}
	var hard struct {
		Tools []mcp.Tool `json:"tools"`
	}
	for name, v := range map[string]any{"servers.json": &real, "hard.json": &hard} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	var out []mcp.Tool
	for _, s := range real.Servers {
		out = append(out, s.Tools...)
	}
	out = append(out, hard.Tools...)
	if len(out) < 100 {
		t.Fatalf("the corpus has %d tools", len(out))
	}
	return out
}

// Field returns a top-level field of a JSON object, raw.
func Field(t testing.TB, body []byte, key string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("request body %.200s: %v", body, err)
	}
	return m[key]
}

package toolrank

import (
	"slices"
	"strings"
	"testing"
)

// TestWords checks the splitting the ranking depends on: case changes,
// separators, plural endings, common words.
func TestWords(t *testing.T) {
	got := words("getTinyImage read_text-files of the Numbers")
	want := []string{"get", "tiny", "image", "read", "text", "file", "number"}
	if !slices.Equal(got, want) {
		t.Errorf("words: %v, want %v", got, want)
	}
}

// TestBM25 checks the order: the better match first, equal scores by
// key, at most k, nothing for a query of common words only.
func TestBM25(t *testing.T) {
	docs := []Doc{
		{Key: "b", Name: "write_file", Description: "Writes a file."},
		{Key: "a", Name: "read_file", Description: "Reads a file from disk."},
		{Key: "c", Name: "add", Description: "Adds two numbers."},
		{Key: "d", Name: "read_file", Description: "Reads a file from disk."},
	}
	hits := BM25(docs, "read a file", 3)
	if len(hits) != 3 || hits[0].Index != 1 || hits[1].Index != 3 || hits[2].Index != 0 {
		t.Errorf("hits %v", hits)
	}
	if hits := BM25(docs, "the of a", 5); hits != nil {
		t.Errorf("common words only: %v", hits)
	}
	if hits := BM25(nil, "file", 5); hits != nil {
		t.Errorf("no docs: %v", hits)
	}
	if hits := Overlap(docs, "numbers", 5); len(hits) != 1 || hits[0].Index != 2 {
		t.Errorf("overlap %v", hits)
	}
}

// TestSearch checks search_tools' answer: the best first under its key,
// k bounded, docs keep refuses left out, bad arguments said.
func TestSearch(t *testing.T) {
	docs := []Doc{
		{Key: "fs__write", Name: "write_file", Description: "Writes a file."},
		{Key: "fs__read", Name: "read_file", Description: "Reads a file\nfrom disk."},
		{Key: "calc__add", Name: "add", Description: "Adds two numbers."},
	}
	text, ok := Search(docs, []byte(`{"query":"read a file","k":1}`), nil)
	if !ok || text != "1. fs__read: Reads a file from disk.\nCall describe_tool with a name for its parameters." {
		t.Errorf("search: %q", text)
	}
	text, _ = Search(docs, []byte(`{"query":"read a file"}`), func(i int) bool { return i != 1 })
	if !strings.HasPrefix(text, "1. fs__write: ") || strings.Contains(text, "fs__read") {
		t.Errorf("kept: %q", text)
	}
	if text, ok := Search(docs, []byte(`{"query":"zebra"}`), nil); !ok || text != `No tool matches "zebra". Try other words.` {
		t.Errorf("no match: %q", text)
	}
	for _, bad := range []string{`{}`, `{"query":" "}`, `[1]`, `{"query":1}`} {
		if text, ok := Search(docs, []byte(bad), nil); ok || !strings.Contains(text, "search_tools takes") {
			t.Errorf("%s: %q %v", bad, text, ok)
		}
	}
	if got := Clip("héllo", 2); got != "h…" {
		t.Errorf("clip: %q", got)
	}
}

package toolrank

import (
	"slices"
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

package reqmeta

import (
	"encoding/json"
	"os"
	"testing"
)

// TestSpecValueTable checks the client's encoder against the table the
// server core is checked against (internal/servehttp/testdata): the
// specification's encoding examples and the edges of its rules. The table
// is shared, the code is not: a misreading on either side fails one test.
func TestSpecValueTable(t *testing.T) {
	b, err := os.ReadFile("../servehttp/testdata/header_values.json")
	if err != nil {
		t.Fatal(err)
	}
	var table struct {
		Encodings []struct{ Value, Encoded, Why string }
	}
	if err := json.Unmarshal(b, &table); err != nil {
		t.Fatal(err)
	}
	if len(table.Encodings) < 10 {
		t.Fatalf("%d rows: not the table", len(table.Encodings))
	}
	for _, r := range table.Encodings {
		if got := EncodeHeaderValue(r.Value); got != r.Encoded {
			t.Errorf("EncodeHeaderValue(%q) = %q, want %q (%s)", r.Value, got, r.Encoded, r.Why)
		}
	}
}

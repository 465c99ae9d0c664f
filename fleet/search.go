package fleet

import (
	"context"

	"github.com/anymcp/anymcp/internal/toolrank"
)

// Match is a tool SearchTools found, with its score: higher is better,
// comparable only within one search.
type Match struct {
	Tool
	Score float64
}

// SearchTools returns the k tools of the catalogue (Tools: servers not
// connected yet are dialled) that best match query, best first; fewer
// when fewer match at all. The ranking is BM25 over the words of each
// tool's name, title and description (names split at case changes, "_"
// and "-"; plural endings dropped), the better of the rankings measured
// on the tools of the servers this repository tests against
// (docs/fleet.md).
func (f *Fleet) SearchTools(ctx context.Context, query string, k int) ([]Match, error) {
	cat, err := f.Tools(ctx)
	if err != nil {
		return nil, err
	}
	return searchRank(cat.Tools, query, k), nil
}

// searchRank is SearchTools' ranking: the one TestSearchQuality measures.
var searchRank = rankBM25

// rankBM25 ranks tools for query by Okapi BM25 (internal/toolrank).
func rankBM25(tools []Tool, query string, k int) []Match {
	return matches(tools, toolrank.BM25(docs(tools), query, k))
}

// rankOverlap ranks tools by term overlap: the simple ranking BM25 was
// measured against (search_quality_test.go).
func rankOverlap(tools []Tool, query string, k int) []Match {
	return matches(tools, toolrank.Overlap(docs(tools), query, k))
}

func docs(tools []Tool) []toolrank.Doc {
	ds := make([]toolrank.Doc, len(tools))
	for i, t := range tools {
		ds[i] = toolrank.Doc{Key: t.Name, Name: t.Tool.Name, Title: t.Tool.Title, Description: t.Tool.Description}
	}
	return ds
}

func matches(tools []Tool, hs []toolrank.Hit) []Match {
	var out []Match
	for _, h := range hs {
		out = append(out, Match{Tool: tools[h.Index], Score: h.Score})
	}
	return out
}

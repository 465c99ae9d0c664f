// Package toolrank ranks tools for a query by the words of their names,
// titles and descriptions: the search of package fleet and of the LLM
// layer's search_tools. Its quality is measured in fleet's
// search_quality_test.go over the tools of the servers this repository
// tests against (docs/fleet.md).
package toolrank

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"unicode"
)

// Doc is one tool to rank.
type Doc struct {
	Key         string // unique: orders equal scores, the same way every time
	Name        string // the tool's own name (split into words)
	Title       string
	Description string
}

// Hit is a ranked tool: its index in the docs, and its score (higher is
// better, comparable only within one ranking).
type Hit struct {
	Index int
	Score float64
}

// words splits s into lower-case words: at every character that is not
// a letter or a digit, and at a change from lower to upper case
// (getTinyImage: get, tiny, image); common words and plural endings go.
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			w := stem(strings.ToLower(string(cur)))
			if !stopWords[w] {
				out = append(out, w)
			}
			cur = cur[:0]
		}
	}
	var prev rune
	for _, r := range s {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return out
}

// stem strips a plural or verb ending, so that "numbers" finds "number"
// and "returns" "return": crude, and measured to help.
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		return w[:len(w)-1]
	}
	return w
}

var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "to": true, "of": true, "and": true, "or": true, "for": true,
	"in": true, "on": true, "with": true, "my": true, "me": true, "is": true, "it": true, "by": true,
	"that": true, "thi": true, "be": true, "at": true, "from": true,
}

// docText is the words of a tool: its name, title and description.
// (Counting the name twice was measured to change nothing.)
func docText(d Doc) []string {
	return slices.Concat(words(d.Name), words(d.Title), words(d.Description))
}

// BM25's usual constants.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// BM25 ranks docs for query by Okapi BM25 and returns the k best, best
// first; fewer when fewer match at all.
func BM25(docs []Doc, query string, k int) []Hit {
	q := words(query)
	if len(q) == 0 || k <= 0 || len(docs) == 0 {
		return nil
	}
	tfs := make([]map[string]int, len(docs))
	lens := make([]int, len(docs))
	df := map[string]int{}
	total := 0
	for i, d := range docs {
		tf := map[string]int{}
		for _, w := range docText(d) {
			tf[w]++
		}
		tfs[i], lens[i] = tf, len(tf)
		for w := range tf {
			df[w]++
		}
		total += lens[i]
	}
	avg := max(float64(total)/float64(len(docs)), 1)
	n := float64(len(docs))
	var out []Hit
	for i := range docs {
		s := 0.0
		for _, w := range q {
			f := float64(tfs[i][w])
			if f == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(df[w])+0.5)/(float64(df[w])+0.5))
			s += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(lens[i])/avg))
		}
		if s > 0 {
			out = append(out, Hit{Index: i, Score: s})
		}
	}
	return best(docs, out, k)
}

// Overlap ranks docs by how many of the query's words occur in the
// tool's name, title or description, as substrings: the simple ranking
// BM25 was measured against.
func Overlap(docs []Doc, query string, k int) []Hit {
	q := words(query)
	if len(q) == 0 || k <= 0 {
		return nil
	}
	var out []Hit
	for i, d := range docs {
		text := strings.ToLower(d.Name + " " + d.Title + " " + d.Description)
		s := 0.0
		for _, w := range q {
			if strings.Contains(text, w) {
				s++
			}
		}
		if s > 0 {
			out = append(out, Hit{Index: i, Score: s})
		}
	}
	return best(docs, out, k)
}

// best sorts hits by score, then key (so that equal scores come in the
// same order every time), and keeps k.
func best(docs []Doc, hs []Hit, k int) []Hit {
	slices.SortFunc(hs, func(a, b Hit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), strings.Compare(docs[a.Index].Key, docs[b.Index].Key))
	})
	if len(hs) > k {
		hs = hs[:k]
	}
	return hs
}

package main

import (
	"slices"
	"strconv"
	"strings"
)

// closest returns up to n of candidates that look like a misspelling of
// name, best first: same letters in another case, a prefix or substring
// either way, or a small edit distance. It only suggests: nothing is ever
// called under a corrected name.
func closest(name string, candidates []string, n int) []string {
	type scored struct {
		name  string
		score int
	}
	lname := strings.ToLower(name)
	var found []scored
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := editDistance(lname, lc)
		limit := max(2, len([]rune(name))/3)
		switch {
		case lc == lname:
			found = append(found, scored{c, 0})
		case len(lname) >= 3 && (strings.HasPrefix(lc, lname) || strings.HasPrefix(lname, lc)):
			found = append(found, scored{c, 1 + min(d, limit)})
		case d <= limit:
			found = append(found, scored{c, 1 + d})
		case len(lname) >= 4 && (strings.Contains(lc, lname) || strings.Contains(lname, lc)):
			found = append(found, scored{c, 2 + limit})
		}
	}
	slices.SortStableFunc(found, func(a, b scored) int { return a.score - b.score })
	out := make([]string, 0, n)
	for _, f := range found {
		if len(out) == n {
			break
		}
		out = append(out, f.name)
	}
	return out
}

// editDistance is the Damerau–Levenshtein distance (with adjacent
// transpositions) between a and b, counted in runes.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// quoteList writes names as "a", "b" or "c".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	switch len(q) {
	case 0:
		return ""
	case 1:
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

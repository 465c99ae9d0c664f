package toolrank

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Search answers the search_tools meta tool (llm.MetaTools) over docs,
// for its JSON arguments {"query": string, "k": integer}: the k best by
// BM25 (5 when k is absent, at most 20), one a line, each with its Key
// and Description. keep, when not nil, says which docs may be answered.
// It is the one answer of the LLM layer's Toolbox and of the gateway.
// ok is false when args are not search_tools' arguments; text then says
// what they should be.
func Search(docs []Doc, args []byte, keep func(i int) bool) (text string, ok bool) {
	var a struct {
		Query string `json:"query"`
		K     int    `json:"k"`
	}
	if err := json.Unmarshal(args, &a); err != nil || strings.TrimSpace(a.Query) == "" {
		return `search_tools takes {"query": string, "k": integer}`, false
	}
	k := a.K
	if k <= 0 {
		k = 5
	}
	k = min(k, 20)
	var sb strings.Builder
	n := 0
	for _, h := range BM25(docs, a.Query, k) {
		if keep != nil && !keep(h.Index) {
			continue
		}
		n++
		d := docs[h.Index]
		fmt.Fprintf(&sb, "%d. %s: %s\n", n, d.Key, strings.Join(strings.Fields(Clip(d.Description, 300)), " "))
	}
	if n == 0 {
		return "No tool matches " + strconv.Quote(Clip(a.Query, 200)) + ". Try other words.", true
	}
	sb.WriteString("Call describe_tool with a name for its parameters.")
	return sb.String(), true
}

// Clip bounds s, a peer's text put into an answer, to n bytes of whole
// UTF-8 characters, marking a cut with "…".
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

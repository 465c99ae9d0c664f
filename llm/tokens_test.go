package llm

import (
	"math"
	"strings"
	"testing"
)

// o200kSamples are texts with their token counts by OpenAI's o200k_base
// encoding (tiktoken-go with embedded encodings, measured outside this
// module: docs/llm-results.md).
var o200kSamples = []struct {
	tokens int
	text   string
}{
	{41, "{\"name\":\"echo\",\"description\":\"Returns the text it is given.\",\"input_schema\":{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\",\"description\":\"text to echo\"}},\"required\":[\"text\"]}}"},
	{160, "{\"name\":\"read_text_file\",\"description\":\"Read the complete contents of a file from the file system as text. Handles various text encodings and provides detailed error messages if the file cannot be read. Use this tool when you need to examine the contents of a single file. Use the 'head' parameter to read only the first N lines of a file, or the 'tail' parameter to read only the last N lines of a file. Only works within allowed directories.\",\"input_schema\":{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"},\"tail\":{\"type\":\"number\",\"description\":\"If provided, returns only the last N lines of the file\"},\"head\":{\"type\":\"number\",\"description\":\"If provided, returns only the first N lines of the file\"}},\"required\":[\"path\"]}}"},
	{90, "func (s *MemoryStore) Read(_ context.Context, id string, offset, length int) ([]byte, int, error) {\n\ts.mu.Lock()\n\tt, ok := s.texts[id]\n\ts.mu.Unlock()\n\tif !ok {\n\t\treturn nil, 0, ErrNoHandle\n\t}\n\tlo, hi := span(offset, length, len(t))\n\treturn []byte(t[lo:hi]), len(t), nil\n}\n"},
	{39, "A fleet of 30 servers is tens of thousands of tokens of tool definitions before the user has said anything. Tools revealed during a conversation are appended, never reordered, so a prompt cache survives."},
	{55, "[FILE] README.md\n[FILE] SECURITY.md\n[DIR] auth\n[DIR] bench\n[DIR] bridge\n[DIR] client\n[FILE] go.mod\n[FILE] go.sum\n[DIR] internal\n[DIR] llm\n"},
	{76, "{\"temperature\":22.5,\"conditions\":\"Partly cloudy\",\"humidity\":65,\"readings\":[1,2,3,4,5,6,7,8,9,10],\"id\":\"4f9c2b1e-77aa-4d0e-9b1a-3c5e8f0d2a61\"}"},
	{33, "日本語のテキストを読み込んで、ファイルの内容を返します。エラーが発生した場合は詳細を表示します。"},
	{20, "Читает полное содержимое файла из файловой системы в виде текста и возвращает его."},
	{21, "读取文件的完整内容，并以文本形式返回。如果无法读取文件，则提供详细的错误信息。"},
	{15, "Größe der Datei überprüfen — Ergebnis: “gültig” ✓ 🚀"},
}

// TestHeuristicError checks the heuristic against real tokenizer counts:
// within 20% on each sample and 5% on their total.
func TestHeuristicError(t *testing.T) {
	var sumE, sumR float64
	for _, s := range o200kSamples {
		e := Heuristic{}.Tokens(s.text)
		if rel := math.Abs(float64(e-s.tokens)) / float64(s.tokens); rel > 0.20 {
			t.Errorf("%d tokens estimated, o200k counts %d (%.0f%% off): %.60q", e, s.tokens, 100*rel, s.text)
		}
		sumE += float64(e)
		sumR += float64(s.tokens)
	}
	if rel := math.Abs(sumE-sumR) / sumR; rel > 0.05 {
		t.Errorf("total %v estimated, %v counted: %.1f%% off", sumE, sumR, 100*rel)
	}
}

// TestHeuristicEdges checks the estimate's floor and its growth.
func TestHeuristicEdges(t *testing.T) {
	h := Heuristic{}
	if h.Tokens("") != 0 || h.Tokens(".") != 1 || h.Tokens("a") < 1 {
		t.Error("empty is 0 tokens, anything else at least 1")
	}
	one := h.Tokens("the quick brown fox jumps over the lazy dog. ")
	if ten := h.Tokens(strings.Repeat("the quick brown fox jumps over the lazy dog. ", 10)); ten < 9*one || ten > 11*one {
		t.Errorf("ten times the text: %d tokens, one time %d", ten, one)
	}
	if h.Tokens("日本語のテキスト") < 4 {
		t.Error("non-ASCII text counts")
	}
}

func BenchmarkHeuristic(b *testing.B) {
	text := strings.Repeat(o200kSamples[1].text+o200kSamples[2].text, 100)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Heuristic{}.Tokens(text)
	}
}

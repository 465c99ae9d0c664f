package llm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/mcp"
)

var (
	pngData = base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n fake image bytes"))
	pdfData = base64.StdEncoding.EncodeToString([]byte("%PDF-1.4 fake"))
	wavData = base64.StdEncoding.EncodeToString([]byte("RIFF fake audio"))
)

var allProviders = []Provider{OpenAIChat, OpenAIResponses, Anthropic, Gemini, GeminiOpenAPI, OpenAICompatible}

// everyBlock is one block of each kind a tool result may hold.
func everyBlock() *mcp.CallToolResult {
	var size int64 = 1234
	return &mcp.CallToolResult{Content: []mcp.Content{
		mcp.TextContent("hello"),
		{Type: mcp.ContentImage, Data: pngData, MimeType: "image/png"},
		{Type: mcp.ContentAudio, Data: wavData, MimeType: "audio/wav"},
		{Type: mcp.ContentResourceLink, URI: "file:///r/notes.txt", Name: "notes", MimeType: "text/plain", Size: &size, Description: "the notes"},
		{Type: mcp.ContentResource, Resource: &mcp.ResourceContents{URI: "file:///r/a.txt", MimeType: "text/plain", Text: "embedded text"}},
		{Type: mcp.ContentResource, Resource: &mcp.ResourceContents{URI: "file:///r/b.pdf", MimeType: "application/pdf", Blob: pdfData}},
		{Type: mcp.ContentResource, Resource: &mcp.ResourceContents{URI: "file:///r/c.bin", MimeType: "application/octet-stream", Blob: pdfData}},
	}}
}

func toWire(t *testing.T, res *mcp.CallToolResult, p Provider, opts ResultOptions) (ToolResult, map[string]any) {
	t.Helper()
	tr, err := Result(context.Background(), res, ToolCall{ID: "call_1", Name: "get"}, Target{Provider: p}, opts)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(tr.Message, &m); err != nil {
		t.Fatalf("%s: message is not a JSON object: %v\n%s", p, err, tr.Message)
	}
	return tr, m
}

// TestResultEveryBlock checks each provider's wire form of a result with
// every kind of block: the shape its API takes, media as its own blocks
// where it has them, placeholders where not, and never base64 in text.
func TestResultEveryBlock(t *testing.T) {
	for _, p := range allProviders {
		t.Run(string(p), func(t *testing.T) {
			tr, m := toWire(t, everyBlock(), p, ResultOptions{})
			raw := string(tr.Message)
			for _, want := range []string{"hello", "embedded text", "file:///r/notes.txt", "the notes", "1.2 KiB"} {
				if !strings.Contains(raw, want) {
					t.Errorf("message lacks %q:\n%s", want, raw)
				}
			}
			texts := modelText(t, p, m)
			for _, d := range []string{pngData, pdfData, wavData} {
				if strings.Contains(texts, d) {
					t.Errorf("base64 data dumped into the text:\n%s", texts)
				}
			}
			if !strings.Contains(texts, "audio, audio/wav") || !strings.Contains(texts, "application/octet-stream") {
				t.Errorf("audio and the binary blob want described placeholders; text:\n%s", texts)
			}
			placeholders := countAction(tr.Changes, ResultPlaceholder)
			switch p {
			case OpenAIChat, OpenAICompatible:
				if m["role"] != "tool" || m["tool_call_id"] != "call_1" {
					t.Errorf("want a tool message for call_1: %s", raw)
				}
				if _, ok := m["content"].(string); !ok {
					t.Errorf("want string content: %s", raw)
				}
				if placeholders != 4 || strings.Contains(raw, pngData) || strings.Contains(raw, pdfData) {
					t.Errorf("want image, audio, pdf and blob as placeholders (got %d), no data: %s", placeholders, raw)
				}
			case OpenAIResponses:
				if m["type"] != "function_call_output" || m["call_id"] != "call_1" {
					t.Errorf("want a function_call_output for call_1: %s", raw)
				}
				items := m["output"].([]any)
				if !hasItem(items, "type", "input_image", "image_url", "data:image/png;base64,"+pngData) ||
					!hasItem(items, "type", "input_file", "file_data", "data:application/pdf;base64,"+pdfData) {
					t.Errorf("want the image as input_image and the PDF as input_file: %s", raw)
				}
				if placeholders != 2 {
					t.Errorf("want audio and blob as placeholders, got %d", placeholders)
				}
			case Anthropic:
				if m["type"] != "tool_result" || m["tool_use_id"] != "call_1" || m["is_error"] != nil {
					t.Errorf("want a tool_result for call_1 without is_error: %s", raw)
				}
				blocks := m["content"].([]any)
				if !hasSource(blocks, "image", "image/png", pngData) || !hasSource(blocks, "document", "application/pdf", pdfData) {
					t.Errorf("want image and document blocks: %s", raw)
				}
			case Gemini:
				fr := m["functionResponse"].(map[string]any)
				if fr["name"] != "get" || fr["id"] != "call_1" {
					t.Errorf("want name and id: %s", raw)
				}
				ps, _ := fr["parts"].([]any)
				if len(ps) != 2 || !strings.Contains(raw, `"mimeType":"image/png"`) || !strings.Contains(raw, `"mimeType":"application/pdf"`) || strings.Contains(raw, "displayName") {
					t.Errorf("want the image and the PDF as inline parts: %s", raw)
				}
			case GeminiOpenAPI:
				fr := m["functionResponse"].(map[string]any)
				if fr["parts"] != nil || placeholders != 4 {
					t.Errorf("older Gemini models take no media in a function response: %s", raw)
				}
			}
		})
	}
}

// modelText is all the text a model reads in a provider's message.
func modelText(t *testing.T, p Provider, m map[string]any) string {
	t.Helper()
	var sb strings.Builder
	add := func(v any) {
		switch x := v.(type) {
		case string:
			sb.WriteString(x)
		case []any:
			for _, it := range x {
				if o, ok := it.(map[string]any); ok {
					if s, ok := o["text"].(string); ok {
						sb.WriteString(s + "\n")
					}
				}
			}
		}
	}
	switch p {
	case OpenAIChat, OpenAICompatible:
		add(m["content"])
	case OpenAIResponses:
		add(m["output"])
	case Anthropic:
		add(m["content"])
	default:
		r := m["functionResponse"].(map[string]any)["response"].(map[string]any)
		add(r["output"])
		add(r["error"])
	}
	return sb.String()
}

func countAction(cs []Change, a Action) int {
	n := 0
	for _, c := range cs {
		if c.Action == a {
			n++
		}
	}
	return n
}

func hasItem(items []any, k1, v1, k2, v2 string) bool {
	return slices.ContainsFunc(items, func(it any) bool {
		o := it.(map[string]any)
		return o[k1] == v1 && o[k2] == v2
	})
}

func hasSource(blocks []any, typ, mime, data string) bool {
	return slices.ContainsFunc(blocks, func(it any) bool {
		o := it.(map[string]any)
		src, _ := o["source"].(map[string]any)
		return o["type"] == typ && src["media_type"] == mime && src["data"] == data && src["type"] == "base64"
	})
}

// TestResultText checks that text alone is the simple form: a string.
func TestResultText(t *testing.T) {
	res := &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("a"), mcp.TextContent("b")}}
	want := map[Provider]string{
		OpenAIChat:       `{"role":"tool","tool_call_id":"call_1","content":"a\n\nb"}`,
		OpenAICompatible: `{"role":"tool","tool_call_id":"call_1","content":"a\n\nb"}`,
		OpenAIResponses:  `{"type":"function_call_output","call_id":"call_1","output":"a\n\nb"}`,
		Anthropic:        `{"type":"tool_result","tool_use_id":"call_1","content":"a\n\nb"}`,
		Gemini:           `{"functionResponse":{"id":"call_1","name":"get","response":{"output":"a\n\nb"}}}`,
		GeminiOpenAPI:    `{"functionResponse":{"id":"call_1","name":"get","response":{"output":"a\n\nb"}}}`,
	}
	for _, p := range allProviders {
		tr, _ := toWire(t, res, p, ResultOptions{})
		if string(tr.Message) != want[p] {
			t.Errorf("%s:\n got %s\nwant %s", p, tr.Message, want[p])
		}
		if len(tr.Changes) != 0 {
			t.Errorf("%s: plain text wants no change, got %v", p, tr.Changes)
		}
	}
}

// TestResultError checks isError: Anthropic's is_error, Gemini's "error"
// key, and a marker line for OpenAI, which has no flag.
func TestResultError(t *testing.T) {
	res := &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("disk full")}, IsError: true}
	for _, p := range allProviders {
		tr, m := toWire(t, res, p, ResultOptions{})
		if !tr.IsError {
			t.Errorf("%s: IsError lost", p)
		}
		text := modelText(t, p, m)
		switch p {
		case Anthropic:
			if m["is_error"] != true || text != "disk full" {
				t.Errorf("%s: %s", p, tr.Message)
			}
		case Gemini, GeminiOpenAPI:
			r := m["functionResponse"].(map[string]any)["response"].(map[string]any)
			if r["error"] != "disk full" || r["output"] != nil {
				t.Errorf("%s: %s", p, tr.Message)
			}
		default:
			if !strings.HasPrefix(text, "Error: ") || !strings.HasSuffix(text, "disk full") || countAction(tr.Changes, ResultMarkedError) != 1 {
				t.Errorf("%s: want a marker line: %s", p, tr.Message)
			}
		}
	}
}

// TestResultStructured checks structuredContent: kept for the host; the
// model reads the content, or the structure as JSON text when the
// content is empty.
func TestResultStructured(t *testing.T) {
	sc := json.RawMessage(`{ "sum" : 5 }`)
	with := &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent("2+3=5")}, StructuredContent: sc}
	without := &mcp.CallToolResult{Content: []mcp.Content{}, StructuredContent: sc}
	for _, p := range allProviders {
		tr, m := toWire(t, with, p, ResultOptions{})
		if string(tr.Structured) != string(sc) || modelText(t, p, m) != "2+3=5" || len(tr.Changes) != 0 {
			t.Errorf("%s with content: %s %v", p, tr.Message, tr.Changes)
		}
		tr, m = toWire(t, without, p, ResultOptions{})
		if string(tr.Structured) != string(sc) || modelText(t, p, m) != `{"sum":5}` || countAction(tr.Changes, ResultSerialized) != 1 {
			t.Errorf("%s without content: %s %v", p, tr.Message, tr.Changes)
		}
	}
}

// TestResultImagesRefused checks the image types each provider takes,
// TextOnly, and the media caps.
func TestResultImagesRefused(t *testing.T) {
	img := func(mime string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{{Type: mcp.ContentImage, Data: pngData, MimeType: mime}}}
	}
	inline := func(p Provider, res *mcp.CallToolResult, o ResultOptions) bool {
		tr, _ := toWire(t, res, p, o)
		return strings.Contains(string(tr.Message), pngData)
	}
	if inline(Gemini, img("image/gif"), ResultOptions{}) || !inline(Anthropic, img("image/gif"), ResultOptions{}) {
		t.Error("Gemini takes no GIF in a function response; Anthropic does")
	}
	if inline(Anthropic, img("image/svg+xml"), ResultOptions{}) || inline(Anthropic, img("image/png"), ResultOptions{TextOnly: true}) {
		t.Error("SVG, or TextOnly, want a placeholder")
	}
	bad := &mcp.CallToolResult{Content: []mcp.Content{{Type: mcp.ContentImage, Data: "not base64!", MimeType: "image/png"}}}
	if tr, _ := toWire(t, bad, Anthropic, ResultOptions{}); strings.Contains(string(tr.Message), "not base64!") {
		t.Errorf("invalid base64 sent: %s", tr.Message)
	}
	many := &mcp.CallToolResult{}
	for range 5 {
		many.Content = append(many.Content, mcp.Content{Type: mcp.ContentImage, Data: pngData, MimeType: "image/png"})
	}
	tr, _ := toWire(t, many, Anthropic, ResultOptions{MaxMediaBlocks: 2})
	if n := strings.Count(string(tr.Message), pngData); n != 2 || countAction(tr.Changes, ResultPlaceholder) != 3 {
		t.Errorf("want 2 images inline and 3 placeholders, got %d inline: %v", n, tr.Changes)
	}
	tr, _ = toWire(t, many, Anthropic, ResultOptions{MaxMediaBytes: 50})
	if n := strings.Count(string(tr.Message), pngData); n != 2 {
		t.Errorf("want 2 images within 50 bytes, got %d", n)
	}
}

// TestResultChatFollowup checks that Chat images go to a follow-up user
// message when asked, and the tool message says where they are.
func TestResultChatFollowup(t *testing.T) {
	tr, m := toWire(t, everyBlock(), OpenAIChat, ResultOptions{ImagesInFollowup: true})
	if strings.Contains(string(tr.Message), pngData) || !strings.Contains(m["content"].(string), "shown in the user message after the tool results") {
		t.Errorf("tool message: %s", tr.Message)
	}
	var f struct {
		Role    string `json:"role"`
		Content []struct {
			Type     string `json:"type"`
			ImageURL struct {
				URL string `json:"url"`
			} `json:"image_url"`
		} `json:"content"`
	}
	if err := json.Unmarshal(tr.Followup, &f); err != nil || f.Role != "user" || len(f.Content) != 2 ||
		f.Content[1].Type != "image_url" || f.Content[1].ImageURL.URL != "data:image/png;base64,"+pngData {
		t.Errorf("follow-up: %s", tr.Followup)
	}
	if tr, _ := toWire(t, everyBlock(), Anthropic, ResultOptions{ImagesInFollowup: true}); tr.Followup != nil {
		t.Error("Anthropic takes images in the tool result: no follow-up")
	}
}

// TestResultEmpty checks a result with nothing in it for each provider.
func TestResultEmpty(t *testing.T) {
	for _, p := range allProviders {
		tr, err := Result(context.Background(), nil, ToolCall{ID: "c", Name: "n"}, Target{Provider: p}, ResultOptions{})
		if err != nil || !json.Valid(tr.Message) {
			t.Errorf("%s: %v %s", p, err, tr.Message)
		}
	}
	if string(mustJSON(anthropicContent(nil))) != "null" {
		t.Error("Anthropic: empty content is omitted")
	}
	if _, err := Result(context.Background(), nil, ToolCall{}, Target{Provider: "acme"}, ResultOptions{}); err == nil {
		t.Error("an unknown provider wants an error")
	}
}

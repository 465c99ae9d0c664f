package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/anymcp/anymcp/mcp"
)

// numbered is n lines "line 00001 ééé…", so that any piece names where it is.
func numbered(n int) string {
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "line %05d héllo wörld\n", i)
	}
	return sb.String()
}

var handleArgs = regexp.MustCompile(`\{"handle":"([0-9a-f]{16})","offset":(\d+),"length":(\d+)\}`)

// TestResultCap checks a result over the cap: head and tail kept, the
// model told where the cut is and how to read it, the whole readable
// back through read_result, piece by piece, byte for byte.
func TestResultCap(t *testing.T) {
	ctx := context.Background()
	full := numbered(2000) // ~50 KB
	store := NewMemoryStore(1 << 20)
	res := &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(full)}}
	for _, p := range allProviders {
		tr, m := toWire(t, res, p, ResultOptions{MaxBytes: 4096, Store: store})
		text := modelText(t, p, m)
		if len(tr.Handles) != 1 || tr.Handles[0].Size != len(full) || countAction(tr.Changes, ResultCut) != 1 {
			t.Fatalf("%s: handles %v changes %v", p, tr.Handles, tr.Changes)
		}
		if !strings.HasPrefix(text, "line 00000") || !strings.HasSuffix(text, "line 01999 héllo wörld\n") {
			t.Errorf("%s: head or tail lost", p)
		}
		if len(text) > 4096+400 || !utf8.ValidString(text) {
			t.Errorf("%s: %d bytes, valid UTF-8 %v", p, len(text), utf8.ValidString(text))
		}
		sub := handleArgs.FindStringSubmatch(text)
		if sub == nil || sub[1] != tr.Handles[0].ID {
			t.Fatalf("%s: the model is not told how to read the rest:\n%s", p, text)
		}
		// Read the cut part back the way a model would, and rebuild the whole.
		off, _ := strconv.Atoi(sub[2])
		head := text[:strings.Index(text, "\n[")]
		if !strings.HasPrefix(full, head) || len(head) != off {
			t.Fatalf("%s: head ends at %d, the notice says %d", p, len(head), off)
		}
		rebuilt := full[:off]
		for reads := 0; ; reads++ {
			if reads > 100 {
				t.Fatal("read_result never reaches the end")
			}
			args := fmt.Sprintf(`{"handle":%q,"offset":%d,"length":1000}`, sub[1], off)
			r, err := ReadResult(ctx, store, json.RawMessage(args), 2048)
			if err != nil || r.IsError {
				t.Fatalf("%s: read_result: %v %v", p, err, r)
			}
			got := r.Content[0].Text
			body := got[strings.Index(got, "\n")+1:]
			rebuilt += body
			if strings.Contains(got, "the end of the result") {
				break
			}
			m := regexp.MustCompile(`offset (\d+)\.`).FindStringSubmatch(got)
			if m == nil {
				t.Fatalf("no next offset: %q", got[:80])
			}
			off, _ = strconv.Atoi(m[1])
		}
		if rebuilt != full {
			t.Errorf("%s: read back %d bytes, want the %d of the whole", p, len(rebuilt), len(full))
		}
	}
}

// TestResultCapNoStore checks that without a store the model is told the
// cut part is gone, and that no cap (-1) keeps everything.
func TestResultCapNoStore(t *testing.T) {
	full := numbered(1000)
	res := &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(full)}}
	tr, m := toWire(t, res, Anthropic, ResultOptions{MaxBytes: 1000})
	text := modelText(t, Anthropic, m)
	if !strings.Contains(text, "was not kept") || len(tr.Handles) != 0 || len(text) > 1400 {
		t.Errorf("%d bytes: %s", len(text), text)
	}
	if _, m := toWire(t, res, Anthropic, ResultOptions{MaxBytes: -1}); modelText(t, Anthropic, m) != full {
		t.Error("MaxBytes -1 wants the whole text")
	}
	if _, m := toWire(t, res, Anthropic, ResultOptions{}); len(modelText(t, Anthropic, m)) > DefaultMaxResultBytes+400 {
		t.Error("the default cap does not hold")
	}
}

// TestResultCapStoreRefuses checks that a store that fails costs only the
// cut part: the model still gets head and tail, told the rest is gone.
func TestResultCapStoreRefuses(t *testing.T) {
	full := numbered(1000)
	res := &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(full)}}
	tr, m := toWire(t, res, Anthropic, ResultOptions{MaxBytes: 1000, Store: NewMemoryStore(100)})
	if !strings.Contains(modelText(t, Anthropic, m), "was not kept") || len(tr.Handles) != 0 || countAction(tr.Changes, ResultCut) != 2 {
		t.Errorf("%v %v", tr.Handles, tr.Changes)
	}
}

// TestResultCapManyBlocks checks the cap over many text blocks and media:
// the text is joined and cut once, the media stay.
func TestResultCapManyBlocks(t *testing.T) {
	res := &mcp.CallToolResult{}
	for i := range 300 {
		res.Content = append(res.Content, mcp.TextContent(fmt.Sprintf("block %d %s", i, strings.Repeat("z", 50))))
	}
	res.Content = append(res.Content, mcp.Content{Type: mcp.ContentImage, Data: pngData, MimeType: "image/png"})
	tr, m := toWire(t, res, Anthropic, ResultOptions{MaxBytes: 2000})
	blocks := m["content"].([]any)
	if len(blocks) != 2 || !strings.Contains(string(tr.Message), pngData) {
		t.Errorf("want one text block and the image, got %d blocks", len(blocks))
	}
	text := modelText(t, Anthropic, m)
	if !strings.HasPrefix(text, "block 0 ") || !strings.Contains(text, "block 299 ") || len(text) > 2400 {
		t.Errorf("%d bytes", len(text))
	}
}

// TestMemoryStoreBounded checks that the memory store evicts the oldest
// texts to stay within its bound, and that evicted handles say so.
func TestMemoryStoreBounded(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore(1000)
	var hs []Handle
	for i := range 10 {
		h, err := s.Put(ctx, strings.Repeat(strconv.Itoa(i), 300))
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
		if s.Bytes() > 1000 {
			t.Fatalf("store holds %d bytes, over its bound", s.Bytes())
		}
	}
	if _, _, err := s.Read(ctx, hs[0].ID, 0, 10); !errors.Is(err, ErrNoHandle) {
		t.Errorf("the oldest wants evicted: %v", err)
	}
	b, size, err := s.Read(ctx, hs[9].ID, 295, 10)
	if err != nil || string(b) != "99999" || size != 300 {
		t.Errorf("newest: %q %d %v", b, size, err)
	}
	if _, err := s.Put(ctx, strings.Repeat("x", 1001)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("want ErrTooLarge, got %v", err)
	}
}

// TestFileStore checks the file store: texts read back, the oldest files
// removed past the bound, and no path a model names ever opened.
func TestFileStore(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := NewFileStore(dir, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var hs []Handle
	for i := range 5 {
		h, err := s.Put(ctx, strings.Repeat(strconv.Itoa(i), 400))
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	if _, _, err := s.Read(ctx, hs[0].ID, 0, 1); !errors.Is(err, ErrNoHandle) {
		t.Errorf("oldest file wants removed: %v", err)
	}
	b, size, err := s.Read(ctx, hs[4].ID, 398, 100)
	if err != nil || string(b) != "44" || size != 400 {
		t.Errorf("%q %d %v", b, size, err)
	}
	for _, id := range []string{"../../etc/passwd", "", "0123456789abcdeg", hs[4].ID + "x"} {
		if _, _, err := s.Read(ctx, id, 0, 1); !errors.Is(err, ErrNoHandle) {
			t.Errorf("id %q: %v", id, err)
		}
	}
	r, err := ReadResult(ctx, s, json.RawMessage(`{"handle":"../x","offset":0,"length":5}`), 100)
	if err != nil || !r.IsError {
		t.Errorf("a bad handle wants an error result the model reads: %v %v", r, err)
	}
}

// TestReadResultArgs checks read_result's answers to bad arguments, and
// that a read never splits a UTF-8 character.
func TestReadResultArgs(t *testing.T) {
	ctx := context.Background()
	s := NewMemoryStore(0)
	h, _ := s.Put(ctx, "ééééé") // 10 bytes
	for _, args := range []string{`{}`, `{"handle":1}`, `{"handle":"x","offset":-1,"length":1}`, `not json`} {
		r, err := ReadResult(ctx, s, json.RawMessage(args), 100)
		if err != nil || !r.IsError {
			t.Errorf("%s: %v %v", args, r, err)
		}
	}
	r, _ := ReadResult(ctx, s, json.RawMessage(fmt.Sprintf(`{"handle":%q,"offset":1,"length":4}`, h.ID)), 100)
	if got := r.Content[0].Text; !strings.HasPrefix(got, "[bytes 2 to 4 of 10;") || !strings.HasSuffix(got, "\né") {
		t.Errorf("%q", got)
	}
	r, _ = ReadResult(ctx, s, json.RawMessage(fmt.Sprintf(`{"handle":%q,"offset":0,"length":1000}`, h.ID)), 3)
	if got := r.Content[0].Text; !strings.HasPrefix(got, "[bytes 0 to 2 of 10; more follows") {
		t.Errorf("maxLength: %q", got)
	}
	if r, _ := ReadResult(ctx, nil, json.RawMessage(`{"handle":"a","offset":0,"length":1}`), 10); !r.IsError {
		t.Error("no store wants an error result")
	}
	if !json.Valid(ReadResultTool().InputSchema) {
		t.Error("read_result's schema is not JSON")
	}
}

// TestResultCapUTF8 checks that a cut never splits a UTF-8 character,
// whatever the cap, in text without line ends to cut at.
func TestResultCapUTF8(t *testing.T) {
	full := strings.Repeat("é€😀", 2000)
	res := &mcp.CallToolResult{Content: []mcp.Content{mcp.TextContent(full)}}
	for limit := 100; limit < 140; limit++ {
		_, m := toWire(t, res, OpenAIResponses, ResultOptions{MaxBytes: limit})
		if text := modelText(t, OpenAIResponses, m); !utf8.ValidString(text) || strings.ContainsRune(text, utf8.RuneError) {
			t.Fatalf("cap %d: the cut split a character: %q", limit, text)
		}
	}
}

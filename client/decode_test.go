package client

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/anymcp/anymcp/internal/jsondec"
	"github.com/anymcp/anymcp/mcp"
)

// decodeResult decodes the large string of a result without copying it: the
// string is the answer's own bytes, so a big text costs its call one buffer,
// not two.
func TestDecodeResultSharesLargeStrings(t *testing.T) {
	text := strings.Repeat("x", jsondec.ShareMin)
	raw := []byte(`{"content":[{"type":"text","text":"` + text + `"}]}`)
	var res mcp.CallToolResult
	if err := decodeResult("tools/call", callResult{raw: raw}, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 || res.Content[0].Text != text {
		t.Fatalf("decoded %+.80v", res)
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(res.Content[0].Text)))
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(raw)))
	if p < lo || p+uintptr(len(text)) > lo+uintptr(len(raw)) {
		t.Error("the text was copied out of the answer")
	}
}

package fleet

import (
	"fmt"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/internal/testkit"
)

// rawServer is a bare Streamable HTTP server whose tools/list result is
// tools, byte for byte (testkit.StartRaw): stateless makes it a 2026-07-28
// server, else a 2025-06-18 one.
func rawServer(t testing.TB, stateless bool, tools string) string {
	url, _ := testkit.StartRaw(t, testkit.RawServer{Tools: tools, Stateless: stateless})
	return url
}

// manyTools is a tools array of n tools shaped as real servers list
// theirs: a description, an input schema of a few parameters, all four
// annotations, and a little _meta (about 900 bytes each).
func manyTools(n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"read_file_%d","title":"Read file %d","description":"Read the complete contents of a file from the file system. Handles various text encodings and provides detailed error messages if the file cannot be read. Only works within allowed directories.",`+
			`"inputSchema":{"type":"object","properties":{"path":{"type":"string","description":"The file to read"},"tail":{"type":"number","description":"If provided, returns only the last N lines of the file"},"head":{"type":"number","description":"If provided, returns only the first N lines of the file"}},"required":["path"],"additionalProperties":false,"$schema":"http://json-schema.org/draft-07/schema#"},`+
			`"annotations":{"readOnlyHint":true,"idempotentHint":true,"destructiveHint":false,"openWorldHint":false},"_meta":{"vendor/build":"%d","vendor/area":"files"}}`, i, i, i)
	}
	b.WriteByte(']')
	return b.String()
}

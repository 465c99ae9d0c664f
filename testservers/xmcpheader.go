package testservers

import (
	"net/http"

	"github.com/anymcp/anymcp/internal/servehttp"
)

// The rules of revision 2026-07-28 for Mcp-Name and Mcp-Param-{Name}
// values and for x-mcp-header annotations are the server core's
// (internal/servehttp), shared with the bridge; the client builds its
// headers with code of its own, which these servers check.

// HeaderParamPrefix starts the name of the headers that mirror tool
// parameters annotated with x-mcp-header (2026-07-28).
const HeaderParamPrefix = servehttp.HeaderParamPrefix

// headerParam is one x-mcp-header annotation of a tool's inputSchema.
type headerParam = servehttp.ParamHeader

// headerParams returns the x-mcp-header annotations of a tool's
// inputSchema, checked against the rules of 2026-07-28.
func headerParams(schema []byte) ([]headerParam, error) { return servehttp.ParamHeaders(schema) }

// decodeHeaderValue returns the value a Mcp-Name or Mcp-Param-* header
// carries: its Base64 sentinel decoded, else itself once its characters
// are checked.
func decodeHeaderValue(v string) (string, error) { return servehttp.DecodeValue(v) }

// EncodeHeaderValue returns v as a Mcp-Name or Mcp-Param-* header value
// must carry it: itself when it is visible ASCII (spaces inside
// allowed), else the Base64 sentinel =?base64?…?= of its UTF-8 bytes (as
// also for a tab, surrounding whitespace, or a value that looks like a
// sentinel). Tests use it to build requests by hand.
func EncodeHeaderValue(v string) string { return servehttp.EncodeValue(v) }

// checkParamHeaders checks the Mcp-Param-* headers of a tools/call against
// its arguments. It returns the header at fault ("" when all is well) and
// why.
func checkParamHeaders(h http.Header, params []headerParam, args []byte) (header, why string) {
	if m := servehttp.CheckParams(h, params, args); m != nil {
		return m.Header, m.Why
	}
	return "", ""
}

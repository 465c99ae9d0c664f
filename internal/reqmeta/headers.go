package reqmeta

import (
	"encoding/base64"
	"net/http"
	"strings"
)

// Header names of the request metadata (in canonical form).
const (
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
	// HeaderParamPrefix starts the header of a parameter annotated
	// x-mcp-header: Mcp-Param-{value of the annotation}.
	HeaderParamPrefix = "Mcp-Param-"
)

// Headers returns the standard headers of a 2026-07-28 request:
// MCP-Protocol-Version, Mcp-Method, and Mcp-Name when name is not empty
// (encoded as EncodeHeaderValue says).
func Headers(version, method, name string) http.Header {
	h := make(http.Header, 4)
	h[HeaderProtocolVersion] = []string{version}
	h[HeaderMethod] = []string{method}
	if name != "" {
		h[HeaderName] = []string{EncodeHeaderValue(name)}
	}
	return h
}

const (
	sentinelPrefix = "=?base64?"
	sentinelSuffix = "?="
)

// EncodeHeaderValue returns s as a header value: as it is when it is plain
// visible ASCII (spaces inside allowed), otherwise — non-ASCII or control
// characters (a tab is one), leading or trailing whitespace, or a value
// that looks like the sentinel itself — as the Base64 sentinel
// "=?base64?…?=" of its UTF-8 bytes.
func EncodeHeaderValue(s string) string {
	if plainHeaderValue(s) {
		return s
	}
	return sentinelPrefix + base64.StdEncoding.EncodeToString([]byte(s)) + sentinelSuffix
}

func plainHeaderValue(s string) bool {
	if s == "" {
		return true
	}
	if isSpace(s[0]) || isSpace(s[len(s)-1]) {
		return false
	}
	if strings.HasPrefix(s, sentinelPrefix) && strings.HasSuffix(s, sentinelSuffix) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7E {
			return false
		}
	}
	return true
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

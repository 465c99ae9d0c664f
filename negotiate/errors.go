package negotiate

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// Error is a negotiation in which no transport worked. Its text names every
// attempt, e.g. "POST http://h/mcp → 404; GET http://h/mcp → 404, not an
// SSE stream", and it unwraps to each attempt's error, so errors.As finds
// a *jsonrpc.HTTPError with the status that stopped the ladder.
type Error struct {
	Report *Report
	Errs   []error // one per attempt, in order
}

func (e *Error) Error() string {
	parts := make([]string, 0, len(e.Errs))
	for _, err := range e.Errs {
		parts = append(parts, err.Error())
	}
	return strings.Join(parts, "; ")
}

// Unwrap returns the attempts' errors.
func (e *Error) Unwrap() []error { return e.Errs }

// NewerServerError says the server answered initialize the way a server of
// a later revision (2026-07-28 and on) does: it is newer than this client,
// not older, so falling back to HTTP+SSE would be wrong.
type NewerServerError struct {
	URL       string
	Status    int            // the HTTP status, 0 when it came in a 2xx body
	RPCError  *jsonrpc.Error // what the server said
	Supported []string       // the revisions the server listed, when it did
}

func (e *NewerServerError) Error() string {
	s := fmt.Sprintf("%s speaks a newer MCP revision than this client (initialize answered %v)", e.URL, e.RPCError)
	if len(e.Supported) > 0 {
		s += "; it supports " + strings.Join(e.Supported, ", ")
	}
	return s + "; this client speaks 2024-11-05 to 2025-11-25"
}

func (e *NewerServerError) Unwrap() error { return e.RPCError }

// newerServer reports whether a JSON-RPC error to initialize is the mark
// of a newer server: method not found (a server without initialize), or a
// list of supported revisions none of which this client speaks. A list
// that names a revision we do speak is an older server's refusal, not a
// newer one's.
func newerServer(e *jsonrpc.Error) (supported []string, ok bool) {
	if e == nil {
		return nil, false
	}
	var data struct {
		Supported []string `json:"supported"`
	}
	if len(e.Data) > 0 && json.Unmarshal(e.Data, &data) == nil && len(data.Supported) > 0 {
		for _, v := range data.Supported {
			if mcp.IsSupportedVersion(v) {
				return nil, false
			}
		}
		return data.Supported, true
	}
	if e.Code == jsonrpc.CodeMethodNotFound || e.Code == jsonrpc.CodeUnsupportedProtocolVersion {
		return nil, true
	}
	return nil, false
}

// isFallbackStatus: the statuses the specification names as "this is not a
// Streamable HTTP endpoint, try HTTP+SSE".
func isFallbackStatus(code int) bool { return code == 400 || code == 404 || code == 405 }

// statusOf returns the HTTP status an error carries, or 0.
func statusOf(err error) int {
	var he *jsonrpc.HTTPError
	if errors.As(err, &he) {
		return he.StatusCode
	}
	return 0
}

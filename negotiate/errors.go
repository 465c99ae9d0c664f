package negotiate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/anymcp/anymcp/internal/wire"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// Error is a negotiation in which no transport worked. Its text names every
// attempt, e.g. "POST http://h/mcp (initialize) → 404; GET http://h/mcp →
// 404, not an SSE stream", with the cause of any that the status does not
// explain ("GET http://h/sse → 200: endpoint ... is on another origin than
// the SSE URL ...: refused") and what the server said with a status that
// stopped the ladder ("POST http://h/mcp (initialize) → 500: database
// down"); it unwraps to each attempt's error, so errors.As finds a
// *jsonrpc.HTTPError with the status that stopped the ladder.
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

// ErrProbeDropped is matched by the error of a negotiation that stopped
// because the server closed the connection instead of answering the stateless
// probe (server/discover) over HTTP. A server that fails on any method it
// does not know does so (mcp-golang's HTTP transport panics), and the
// initialize era alone (EraPolicy InitializeOnly: initialize, no probe) may reach
// it. The ladder does not fall back by itself: a dropped connection is
// also what a server in trouble gives, and is reported as itself.
var ErrProbeDropped = errors.New("the server closed the connection instead of answering server/discover, as a server that fails on methods it does not know does: the initialize era alone (no probe) may reach it")

// NewerServerError says the server speaks only revisions this client does
// not: it refused the opening request of every era it was offered and
// listed (when it did) the revisions it speaks, none of them ours. It is
// newer than this client (or otherwise incompatible), not older, so
// falling back to an older transport would be wrong.
type NewerServerError struct {
	URL       string
	Status    int            // the HTTP status, 0 when it came in a 2xx body
	RPCError  *jsonrpc.Error // what the server said
	Supported []string       // the revisions the server listed, when it did
}

func (e *NewerServerError) Error() string {
	common := mcp.BestVersion(mcp.EraStateless, e.Supported) != "" || mcp.BestVersion(mcp.EraInitialize, e.Supported) != ""
	var s string
	if common {
		s = fmt.Sprintf("%s is a newer (stateless) server: it refused the initialize handshake (%v)", e.URL, e.RPCError)
	} else {
		s = fmt.Sprintf("%s speaks a newer MCP revision than this client (it answered %v)", e.URL, e.RPCError)
	}
	if len(e.Supported) > 0 {
		s += "; it supports " + wire.VersionList(e.Supported)
	}
	s += "; this client speaks " + strings.Join(ClientVersions(), ", ")
	if common {
		s += ", but the era policy kept it from the stateless request"
	}
	return s
}

// Unwrap returns the server's JSON-RPC error.
func (e *NewerServerError) Unwrap() error { return e.RPCError }

// ClientVersions lists every revision this client speaks, newest first.
func ClientVersions() []string {
	return append(append([]string(nil), mcp.StatelessVersions...), mcp.InitializeVersions...)
}

// ErrTooManyEarlyRequests is matched (errors.Is) by the error of a rung
// whose server sent more than 256 requests before answering
// initialize: requests are never dropped, so the negotiation gives up.
var ErrTooManyEarlyRequests = errors.New("too many requests from the server before its initialize answer")

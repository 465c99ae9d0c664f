package ladder

import (
	"github.com/anymcp/anymcp/jsonrpc"
)

// Hello holds the requests that open a conversation in each era; the
// protocol layer builds them (they carry its client info and capabilities),
// the ladder sends them. Either may be nil to leave its era out.
type Hello struct {
	// Discover returns the stateless probe for revision version: a
	// server/discover request whose _meta carries that revision, the
	// client's info and its capabilities. The ladder gives it its id.
	Discover func(version string) *jsonrpc.Message
	// Initialize is the initialize handshake's initialize request. The ladder
	// gives it its id.
	Initialize *jsonrpc.Message
}

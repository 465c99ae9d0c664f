package testservers

import (
	"encoding/json"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// bridgeLine serves a line as StdioFaults.SessionOnFirstMessage says, and
// reports whether it did; the others go to the session as usual. started
// is whether a request has started the session.
func (s *Server) bridgeLine(line []byte, ss *Session, p *stdioPeer, started *bool) bool {
	if !s.opts.Stdio.SessionOnFirstMessage {
		return false
	}
	m, err := jsonrpc.DecodeMessage(line)
	if err != nil || !m.IsRequest() {
		return false
	}
	if !*started {
		*started = true
		if m.Method != "initialize" {
			// The bridge initializes its upstream itself.
			params, _ := json.Marshal(mcp.InitializeParams{ProtocolVersion: s.opts.Versions[0],
				ClientInfo: mcp.Implementation{Name: "bridge", Version: "0"}})
			_, _ = ss.initialize(params)
		}
		return false
	}
	if m.Method != "initialize" {
		return false
	}
	_ = p.write(&jsonrpc.Message{ID: m.ID, Error: jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Invalid Request: Server already initialized")})
	return true
}

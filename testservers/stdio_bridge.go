package testservers

import (
	"context"
	"encoding/json"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// bridgeState is what StdioFaults.SessionOnFirstMessage keeps of a
// session.
type bridgeState struct {
	started bool   // a request has started the session
	held    []byte // the first request, held (HoldFirstAnswer)
}

// bridgeLine serves a line as StdioFaults.SessionOnFirstMessage says, and
// reports whether it did; the others go to the session as usual.
func (s *Server) bridgeLine(ctx context.Context, line []byte, ss *Session, p *stdioPeer, st *bridgeState) bool {
	f := s.opts.Stdio
	if !f.SessionOnFirstMessage {
		return false
	}
	if st.held != nil {
		held := st.held
		st.held = nil
		s.handleLine(ctx, held, ss, p)
	}
	m, err := jsonrpc.DecodeMessage(line)
	if err != nil || !m.IsRequest() {
		return false
	}
	if !st.started {
		st.started = true
		if m.Method == "initialize" {
			return false
		}
		// The bridge initializes its upstream itself.
		params, _ := json.Marshal(mcp.InitializeParams{ProtocolVersion: s.opts.Versions[0],
			ClientInfo: mcp.Implementation{Name: "bridge", Version: "0"}})
		_, _ = ss.initialize(params)
		if f.HoldFirstAnswer {
			st.held = line
			return true
		}
		return false
	}
	if m.Method != "initialize" {
		return false
	}
	_ = p.write(&jsonrpc.Message{ID: m.ID, Error: jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Invalid Request: Server already initialized")})
	return true
}

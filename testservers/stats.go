package testservers

import (
	"maps"
	"slices"

	"github.com/anymcp/anymcp/mcp"
)

// Stats is what a server has seen, for tests to assert on. Server.Stats
// returns a copy.
type Stats struct {
	// Sessions is the number of sessions open now.
	Sessions int
	// Initializations counts initialize requests answered.
	Initializations int
	// Initialized counts notifications/initialized received.
	Initialized int
	// ProtocolVersion is the revision the last initialize negotiated.
	ProtocolVersion string
	// RequestedVersion is the revision the last initialize asked for.
	RequestedVersion string
	// ClientInfo and ClientCapabilities are from the last initialize.
	ClientInfo         mcp.Implementation
	ClientCapabilities mcp.ClientCapabilities
	// Requests counts client requests received, by method.
	Requests map[string]int
	// ToolCalls counts tool executions, by tool name.
	ToolCalls map[string]int
	// Counter is the value of the counter tool's execution counter.
	Counter int64
	// Cancelled counts notifications/cancelled received;
	// LastCancelledID (the request id as JSON text) and
	// LastCancelledReason are from the last one.
	Cancelled           int
	LastCancelledID     string
	LastCancelledReason string
	// RootsListChanged counts notifications/roots/list_changed received.
	RootsListChanged int
	// LogLevel is the level of the last logging/setLevel.
	LogLevel mcp.LoggingLevel
	// Subscriptions are the resource URIs some open session is
	// subscribed to, sorted, each once.
	Subscriptions []string
}

// Stats returns a snapshot of what the server has seen.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	st := s.st
	st.Requests = maps.Clone(s.st.Requests)
	st.ToolCalls = maps.Clone(s.st.ToolCalls)
	st.Sessions = len(s.sessions)
	sessions := make([]*Session, 0, len(s.sessions))
	for ss := range s.sessions {
		sessions = append(sessions, ss)
	}
	s.mu.Unlock()

	subs := map[string]bool{}
	for _, ss := range sessions {
		ss.mu.Lock()
		for uri := range ss.subs {
			subs[uri] = true
		}
		ss.mu.Unlock()
	}
	st.Subscriptions = slices.Sorted(maps.Keys(subs))
	return st
}

// count updates the stats under the server's lock.
func (s *Server) count(f func(*Stats)) {
	s.mu.Lock()
	f(&s.st)
	s.mu.Unlock()
}

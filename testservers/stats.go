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

	// Executions counts executions of the once tool, whatever their key.
	Executions int
	// Duplicates counts executions of the once tool for a key that had
	// already run: a client that sends a non-idempotent call twice.
	Duplicates int
	// DuplicateKeys are the keys of the once tool executed more than
	// once, sorted.
	DuplicateKeys []string

	// SessionsCreated counts the sessions ever opened (including those
	// of failed initializations and the shared one of a stateless server).
	SessionsCreated int
	// SessionsExpired counts the sessions the server ended by itself,
	// through a fault (FaultExpireSession, FaultRestart) or on demand
	// (ExpireSession, ExpireAll, Restart, EndSession), not those a
	// client deleted or that Close ended.
	SessionsExpired int
	// Rejected counts the requests answered 429 or 503 by a fault: the
	// core never saw them.
	Rejected int
	// Resumed counts SSE streams resumed by a GET with Last-Event-ID.
	Resumed int
	// Faults counts the faults injected, by kind (the Fault's text, for
	// example "429" or "drop-stream"). A drop counts when the stream is
	// actually cut.
	Faults map[string]int
}

// Stats returns a snapshot of what the server has seen.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	st := s.st
	st.Requests = maps.Clone(s.st.Requests)
	st.ToolCalls = maps.Clone(s.st.ToolCalls)
	st.Faults = maps.Clone(s.st.Faults)
	st.DuplicateKeys = slices.Clone(s.st.DuplicateKeys)
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

// execute records one execution of the once tool for key and returns how
// many times key has run, this one included.
func (s *Server) execute(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.executed[key]++
	n := s.executed[key]
	s.st.Executions++
	if n > 1 {
		s.st.Duplicates++
		if n == 2 {
			i, _ := slices.BinarySearch(s.st.DuplicateKeys, key)
			s.st.DuplicateKeys = slices.Insert(s.st.DuplicateKeys, i, key)
		}
	}
	return n
}

// fault counts one fault of kind f.
func (s *Server) fault(f Fault) {
	s.count(func(st *Stats) { st.Faults[string(f)]++ })
}

package testservers

import (
	"context"
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
	// Requests counts client requests received, by method (those the
	// core handled: see Refused).
	Requests map[string]int
	// Refused counts the stateless HTTP requests the front-end refused
	// before the core saw them (headers, version, _meta, unknown method,
	// initialize on a stateless-only server), by method.
	Refused map[string]int
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
	// Unanswered counts the requests left without an answer on purpose
	// (Options.SilentBeforeInitialize).
	Unanswered int
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

	// Errors counts the JSON-RPC error responses the core sent, by code,
	// in either era (the stateless HTTP front-end's refusals of headers,
	// versions and methods included).
	Errors map[int64]int
	// RequestsCancelled counts the requests that ended cancelled by their
	// client before they finished: by notifications/cancelled, or (over
	// HTTP, 2026-07-28) by the client closing the response stream.
	RequestsCancelled int

	// VersionsSeen counts the revisions stateless requests asked for (in
	// _meta or, over HTTP, in MCP-Protocol-Version), supported or not.
	VersionsSeen map[string]int
	// StatelessClientInfo and StatelessClientCapabilities are from the _meta of
	// the last stateless request that passed validation.
	StatelessClientInfo         mcp.Implementation
	StatelessClientCapabilities mcp.ClientCapabilities
	// HeaderRejects counts the stateless HTTP requests refused with -32020
	// (HeaderMismatch), by the header at fault: "MCP-Protocol-Version",
	// "Mcp-Method", "Mcp-Name" or "Mcp-Param-<Name>" as the tool's
	// x-mcp-header spells it.
	HeaderRejects map[string]int
	// InitializeRejected counts legacy messages a StatelessOnly server refused:
	// initialize, and with InitializeLikeGoSDK every POST after it that
	// names an old revision.
	InitializeRejected int
	// InputRequired counts the input_required results sent, by tool,
	// prompt or resource URI.
	InputRequired map[string]int
	// StateRejected counts the requests refused because their
	// requestState failed verification (tampered, expired, replayed, or
	// presented on another request).
	StateRejected int
	// ListenStreams counts the subscriptions/listen requests
	// acknowledged; ListenActive is how many are open now;
	// ListenEnded counts those the server ended with a result (graceful
	// closure).
	ListenStreams int
	ListenActive  int
	ListenEnded   int

	// Tasks (Options.Tasks), of both eras. TasksCreated counts the tasks
	// created; TasksRefused the creations refused beyond MaxTasks.
	TasksCreated int
	TasksRefused int
	// TaskPolls counts the tasks/get answered with a task; TaskResults
	// the tasks/result requests for a known task (2025-11-25);
	// TaskUpdates the tasks/update requests for a known task
	// (2026-07-28); TaskCancels the tasks that tasks/cancel moved to
	// cancelled.
	TaskPolls   int
	TaskResults int
	TaskUpdates int
	TaskCancels int
	// TaskInputRequests counts the input requests tasks made:
	// 2025-11-25, each request sent to the client (a request sent again
	// on a newer tasks/result counts again); 2026-07-28, each key of
	// inputRequests issued.
	TaskInputRequests int
	// TaskExecutions counts the executions of tools as tasks, by tool
	// name (ToolCalls counts them too, with those as plain calls).
	TaskExecutions map[string]int
	// TasksForgotten counts the tasks the server dropped: their ttl
	// passed, ForgetAfterPolls, or too many ended tasks were kept.
	TasksForgotten int
	// TaskStatus is the status of each task the server keeps now, by
	// id; TasksRunning how many of them are working or input_required.
	TaskStatus   map[string]mcp.TaskStatus
	TasksRunning int
}

// Stats returns a snapshot of what the server has seen.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	st := s.st
	st.Requests = maps.Clone(s.st.Requests)
	st.ToolCalls = maps.Clone(s.st.ToolCalls)
	st.Faults = maps.Clone(s.st.Faults)
	st.Errors = maps.Clone(s.st.Errors)
	st.Refused = maps.Clone(s.st.Refused)
	st.VersionsSeen = maps.Clone(s.st.VersionsSeen)
	st.HeaderRejects = maps.Clone(s.st.HeaderRejects)
	st.InputRequired = maps.Clone(s.st.InputRequired)
	st.TaskExecutions = maps.Clone(s.st.TaskExecutions)
	st.ListenActive = len(s.listeners)
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
	st.TaskStatus, st.TasksRunning = s.taskStatuses()
	return st
}

// count updates the stats under the server's lock.
func (s *Server) count(f func(*Stats)) {
	s.mu.Lock()
	f(&s.st)
	s.changedLocked()
	s.mu.Unlock()
}

// changedLocked wakes the waiters of WaitStats.
func (s *Server) changedLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// WaitStats waits until cond holds for the server's Stats and returns
// them, or returns the last Stats and ctx's error when ctx ends first.
// cond is checked at once and after every change: a test waits for an
// event on the server's side (a cancellation seen, a stream opened)
// without sleeping.
func (s *Server) WaitStats(ctx context.Context, cond func(Stats) bool) (Stats, error) {
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		st := s.Stats()
		if cond(st) {
			return st, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return st, ctx.Err()
		}
	}
}

// execute records one execution of the once tool for key and returns how
// many times key has run, this one included.
func (s *Server) execute(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.changedLocked()
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

// Executed returns how many times the once tool has run for key: a test
// that got "did not run" for a call can check that it did not.
func (s *Server) Executed(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.executed[key]
}

// fault counts one fault of kind f.
func (s *Server) fault(f Fault) {
	s.count(func(st *Stats) { st.Faults[string(f)]++ })
}

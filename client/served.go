package client

import (
	"context"
	"fmt"
	"sync"

	"github.com/anymcp/anymcp/jsonrpc"
)

// servedTable is the server's requests the Conn answers: those whose
// handlers run (by request id, with the func that cancels each, and the
// goroutines they run on), and the refusals being sent.
//
// Invariants: at most maxServing requests run at once, holding params of
// at most maxServingBytes in all (unless only one runs), and no two with
// one id; at most maxServing refusals are on their way. A request past
// these bounds is refused or, past the refusals' bound, dropped.
// Its lock is a leaf: nothing else is locked while it is held.
type servedTable struct {
	mu       sync.Mutex
	cancels  map[string]context.CancelFunc // requests in progress, by id
	bytes    int                           // params of the requests in cancels
	refusing int                           // refusals being sent
	handlers map[uint64]bool               // goroutines running the requests' handlers
}

func newServedTable() servedTable {
	return servedTable{cancels: make(map[string]context.CancelFunc), handlers: make(map[uint64]bool)}
}

// admission is what admit decided of a request of the server's.
type admission int

const (
	serveAdmitted admission = iota // its handler runs: answer it, then call done
	serveRefused                   // answer the refusal admit returned, then call refusalSent
	serveDropped                   // neither: too many refusals are on their way
)

// admit decides on the server's request key (its raw id) with params of
// size bytes: it runs, cancelled by cancel, or is refused with the error
// returned, or is dropped.
func (s *servedTable) admit(key string, size int, cancel context.CancelFunc) (admission, *jsonrpc.Error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var why *jsonrpc.Error
	switch _, dup := s.cancels[key]; {
	case dup:
		why = jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "a request with this id is already in progress")
	case len(s.cancels) >= maxServing:
		why = jsonrpc.NewError(jsonrpc.CodeInternalError,
			fmt.Sprintf("the client is answering %d requests of the server's already", maxServing))
	case len(s.cancels) > 0 && s.bytes+size > maxServingBytes:
		why = jsonrpc.NewError(jsonrpc.CodeInternalError,
			fmt.Sprintf("the client is answering requests of the server's with %d MiB of params already", maxServingBytes>>20))
	default:
		s.cancels[key] = cancel
		s.bytes += size
		return serveAdmitted, nil
	}
	if s.refusing >= maxServing {
		return serveDropped, why
	}
	s.refusing++
	return serveRefused, why
}

// refusalSent frees the place of a refusal admit decided.
func (s *servedTable) refusalSent() {
	s.mu.Lock()
	s.refusing--
	s.mu.Unlock()
}

// running notes that goroutine gid runs the handler of a request admitted.
func (s *servedTable) running(gid uint64) {
	s.mu.Lock()
	s.handlers[gid] = true
	s.mu.Unlock()
}

// done forgets the request key admitted with params of size bytes, whose
// handler ran on goroutine gid: its id is free again.
func (s *servedTable) done(key string, size int, gid uint64) {
	s.mu.Lock()
	delete(s.cancels, key)
	s.bytes -= size
	delete(s.handlers, gid)
	s.mu.Unlock()
}

// cancel cancels the request key, if it is in progress.
func (s *servedTable) cancel(key string) {
	s.mu.Lock()
	cancel := s.cancels[key]
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// idle reports whether no handler runs.
func (s *servedTable) idle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.handlers) == 0
}

// isHandler reports whether goroutine gid runs a handler.
func (s *servedTable) isHandler(gid uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.handlers[gid]
}

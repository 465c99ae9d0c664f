package client

import (
	"strconv"
	"testing"

	"github.com/anymcp/anymcp/jsonrpc"
)

// The table of the server's requests keeps its bounds: one id at a time,
// maxServing requests, maxServingBytes of params (but one request alone
// always runs), and maxServing refusals, past which requests are dropped.
func TestServedTableBounds(t *testing.T) {
	s := newServedTable()
	nop := func() {}

	if v, _ := s.admit("big", maxServingBytes+1, nop); v != serveAdmitted {
		t.Fatalf("a request alone with params past the byte bound: %v, want it admitted", v)
	}
	if v, why := s.admit("small", 1, nop); v != serveRefused || why.Code != jsonrpc.CodeInternalError {
		t.Fatalf("a request past the byte bound: %v %v, want refused with -32603", v, why)
	}
	s.refusalSent()
	s.done("big", maxServingBytes+1, 0)
	if s.bytes != 0 || len(s.cancels) != 0 {
		t.Fatalf("after done: %d bytes, %d requests; want none", s.bytes, len(s.cancels))
	}

	for i := range maxServing {
		if v, why := s.admit(strconv.Itoa(i), 1, nop); v != serveAdmitted {
			t.Fatalf("request %d of %d: %v %v, want admitted", i+1, maxServing, v, why)
		}
	}
	if v, why := s.admit("0", 1, nop); v != serveRefused || why.Code != jsonrpc.CodeInvalidRequest {
		t.Fatalf("a second request with an id in progress: %v %v, want refused with -32600", v, why)
	}
	for i := 1; i < maxServing; i++ {
		if v, why := s.admit("x"+strconv.Itoa(i), 1, nop); v != serveRefused || why.Code != jsonrpc.CodeInternalError {
			t.Fatalf("request past maxServing, refusal %d: %v %v, want refused with -32603", i+1, v, why)
		}
	}
	if v, _ := s.admit("one more", 1, nop); v != serveDropped {
		t.Fatalf("a request past maxServing refusals on their way: %v, want dropped", v)
	}
	s.refusalSent()
	if v, _ := s.admit("after a refusal left", 1, nop); v != serveRefused {
		t.Fatalf("once a refusal was sent: %v, want a refusal again", v)
	}
}

// A request of the server's cancelled by its id runs its cancel func;
// once done, its id no longer cancels anything and is free again.
func TestServedTableCancelAndHandlers(t *testing.T) {
	s := newServedTable()
	cancelled := 0
	if v, _ := s.admit("7", 3, func() { cancelled++ }); v != serveAdmitted {
		t.Fatalf("admit: %v", v)
	}
	if !s.idle() {
		t.Fatal("idle before the handler runs: false, want true")
	}
	s.running(42)
	if s.idle() || !s.isHandler(42) || s.isHandler(43) {
		t.Fatalf("with goroutine 42 running a handler: idle %v, isHandler(42) %v, isHandler(43) %v", s.idle(), s.isHandler(42), s.isHandler(43))
	}
	s.cancel("7")
	s.cancel("8")
	if cancelled != 1 {
		t.Fatalf("cancelled %d times, want 1", cancelled)
	}
	s.done("7", 3, 42)
	s.cancel("7")
	if cancelled != 1 || !s.idle() || s.bytes != 0 {
		t.Fatalf("after done: cancelled %d, idle %v, bytes %d; want 1, true, 0", cancelled, s.idle(), s.bytes)
	}
	if v, _ := s.admit("7", 3, func() {}); v != serveAdmitted {
		t.Fatalf("the id again, once done: %v, want admitted", v)
	}
}

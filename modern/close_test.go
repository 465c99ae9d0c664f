package modern

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/httpopt"
	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/jsonrpc"
)

// TestCloseDELETE: Close ends the session with a DELETE that carries it; a
// 405 (sessions cannot be ended by clients) or 404 (already gone) is fine.
func TestCloseDELETE(t *testing.T) {
	tests := []struct {
		status  int
		wantErr bool
	}{
		{http.StatusOK, false},
		{http.StatusNoContent, false},
		{http.StatusMethodNotAllowed, false},
		{http.StatusNotFound, false},
		{http.StatusInternalServerError, true},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				if r.Method == http.MethodDelete {
					w.WriteHeader(tt.status)
					return
				}
				mcp("s-del")(w, r, body)
			})
			tr, ch := dial(t, s, Options{})
			handshake(t, tr, ch)
			err := tr.Close()
			var he *jsonrpc.HTTPError
			if tt.wantErr != (err != nil) || (err != nil && (!errors.As(err, &he) || he.Method != http.MethodDelete)) {
				t.Errorf("Close = %v, want error: %v", err, tt.wantErr)
			}
			if err2 := tr.Close(); err2 != err {
				t.Errorf("second Close = %v, want %v", err2, err)
			}
			if n := s.Count(http.MethodDelete); n != 1 {
				t.Fatalf("%d DELETE requests, want 1", n)
			}
			for _, r := range s.Requests() {
				if r.Method == http.MethodDelete && r.Header.Get("Mcp-Session-Id") != "s-del" {
					t.Errorf("DELETE without the session: %v", r.Header)
				}
			}
		})
	}
}

// TestCloseWithoutSession: no session, no DELETE.
func TestCloseWithoutSession(t *testing.T) {
	s := newServer(t, mcp(""))
	tr, ch := dial(t, s, Options{})
	handshake(t, tr, ch)
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if n := s.Count(http.MethodDelete); n != 0 {
		t.Errorf("%d DELETE requests, want 0", n)
	}
}

// TestCloseTimeout: a server that never answers the DELETE holds Close
// for CloseTimeout only.
func TestCloseTimeout(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.Method == http.MethodDelete {
			<-r.Context().Done()
			return
		}
		mcp("s-slow")(w, r, body)
	})
	tr, ch := dial(t, s, Options{CloseTimeout: 50 * time.Millisecond})
	handshake(t, tr, ch)
	start := time.Now()
	if err := tr.Close(); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close = %v, want a deadline error", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Close took %v", d)
	}
}

// TestClose: Close is safe from many goroutines, interrupts a Send in
// the middle of a stream and a Recv, stops the GET stream, and leaves
// Send and Recv failing with ErrClosed.
func TestClose(t *testing.T) {
	inStream := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		m, _ := jsonrpc.DecodeMessage(body)
		switch {
		case r.Method == http.MethodGet:
			startSSE(w)
			<-r.Context().Done()
		case m != nil && m.Method == "tools/call":
			startSSE(w)
			close(inStream)
			<-r.Context().Done()
		default:
			mcp("s")(w, r, body)
		}
	})
	tr, err := New(s.URL, Options{})
	if err != nil {
		t.Fatal(err)
	}
	send(t, tr, initialize())
	if _, err := tr.Recv(); err != nil {
		t.Fatal(err)
	}
	send(t, tr, notification("notifications/initialized"))
	testkit.Eventually(t, wait, "the GET stream", func() bool { return s.Count(http.MethodGet) == 1 })

	sendDone := make(chan error, 1)
	go func() { sendDone <- tr.Send(context.Background(), request(2, "tools/call")) }()
	recvDone := make(chan error, 1)
	go func() { _, err := tr.Recv(); recvDone <- err }()
	<-inStream

	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := tr.Close(); err != nil {
				t.Errorf("Close = %v", err)
			}
		}()
	}
	wg.Wait()
	for name, ch := range map[string]chan error{"Send": sendDone, "Recv": recvDone} {
		select {
		case err := <-ch:
			if !errors.Is(err, jsonrpc.ErrClosed) {
				t.Errorf("%s during Close = %v, want ErrClosed", name, err)
			}
		case <-time.After(wait):
			t.Fatalf("%s still blocked after Close", name)
		}
	}
	if err := tr.Send(context.Background(), request(3, "tools/call")); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("Send after Close = %v", err)
	}
	if _, err := tr.Recv(); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("Recv after Close = %v", err)
	}
}

// countingTransport counts round trips and checks a header on each.
type countingTransport struct {
	n       atomic.Int32
	missing atomic.Int32
	base    http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	if r.Header.Get("Authorization") != "Bearer t0ken" {
		c.missing.Add(1)
	}
	return c.base.RoundTrip(r)
}

// TestHostClient: every request (POST, GET, DELETE) goes through the
// host's *http.Client and carries the static headers; a client Timeout
// does not cut the GET stream.
func TestHostClient(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.Method == http.MethodGet {
			ev := startSSE(w)
			time.Sleep(300 * time.Millisecond) // longer than the client Timeout
			ev(data(`{"jsonrpc":"2.0","method":"late"}`))
			<-r.Context().Done()
			return
		}
		mcp("s-rt")(w, r, body)
	})
	rt := &countingTransport{base: http.DefaultTransport}
	client := &http.Client{Transport: rt, Timeout: 200 * time.Millisecond}
	tr, ch := dial(t, s, Options{Common: httpopt.Common{HTTPClient: client, Header: http.Header{"Authorization": {"Bearer t0ken"}}}})
	handshake(t, tr, ch)
	send(t, tr, request(2, "tools/call"))
	next(t, ch)
	if got := describe(next(t, ch)); got != "notification late" {
		t.Fatalf("got %s", got)
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	reqs := s.Requests()
	if int(rt.n.Load()) != len(reqs) || len(reqs) != 5 {
		t.Errorf("round trips %d, server saw %d, want 5", rt.n.Load(), len(reqs))
	}
	if rt.missing.Load() != 0 {
		t.Errorf("%d requests without the static header", rt.missing.Load())
	}
	for _, r := range reqs {
		if r.Header.Get("Authorization") != "Bearer t0ken" {
			t.Errorf("%s arrived without the static header", r.Method)
		}
	}
}

// TestConnectionReuse: a server that ends its event stream after the
// response keeps its connection: sequential calls use one.
func TestConnectionReuse(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		m, _ := jsonrpc.DecodeMessage(body)
		ev := startSSE(w)
		ev(data(response(m.ID.Raw(), "{}")))
	})
	tr, ch := dial(t, s, Options{})
	for i := range int64(20) {
		send(t, tr, request(i+1, "tools/call"))
		next(t, ch)
		tr.WaitDrains() // the stream read to its end: its connection is free
	}
	conns := map[string]bool{}
	for _, r := range s.Requests() {
		conns[r.Remote] = true
	}
	if n := len(conns); n != 1 {
		t.Errorf("%d connections for 20 sequential calls", n)
	}
}

package modern

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/anymcp/anymcp/httpopt"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/testservers"
)

// A server reached over HTTP/2 resets the stream of a tools/call it read
// whole (RST_STREAM PROTOCOL_ERROR, before any answer): net/http would
// send the request again by itself, on a new connection. The tool may have
// run: it reaches the server once and Send's error is outcome unknown.
func TestSendHTTP2StreamResetAfterRequestIsNotSentAgain(t *testing.T) {
	srv := testservers.StartH2Faults(testservers.H2Fault{Reset: testservers.H2ProtocolError})
	t.Cleanup(srv.Close)
	tr := newTransport(t, srv.URL, Options{Common: httpopt.Common{HTTPClient: srv.Client(), Reconnect: tiny()}})
	err := sendErr(tr, request(5, "tools/call"))
	if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Errorf("Send = %v; want an error matching ErrOutcomeUnknown", err)
	}
	if n := srv.Received(); n != 1 {
		t.Errorf("the server read the request %d times; want 1", n)
	}
}

// Over HTTPS and HTTP/2, the redirect policy holds as over HTTP/1: a 307
// to the same origin is followed, the POST's body given again (it was
// answered) with the session and credentials; a 307 to the same host and
// port under http is another origin (the scheme is part of it) and is
// refused before anything is sent there.
func TestRedirectOverHTTP2(t *testing.T) {
	var mu sync.Mutex
	var reached []string
	inner := mcp("s1")
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		reached = append(reached, fmt.Sprintf("%s %s HTTP/%d %q %s", r.Method, r.URL.Path, r.ProtoMajor, r.Header.Get("Authorization"), body))
		mu.Unlock()
		switch r.URL.Path {
		case "/moved":
			w.Header().Set("Location", "/mcp")
			w.WriteHeader(http.StatusTemporaryRedirect)
		case "/downgrade":
			w.Header().Set("Location", "http://"+r.Host+"/mcp")
			w.WriteHeader(http.StatusTemporaryRedirect)
		default:
			inner(w, r, body)
		}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	posts := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := reached
		reached = nil
		return out
	}

	tr := newTransport(t, srv.URL+"/moved", Options{Common: httpopt.Common{HTTPClient: srv.Client(), Header: hostileHeaders(), Reconnect: tiny()}})
	if err := sendErr(tr, request(2, "tools/call")); err != nil {
		t.Fatalf("a POST redirected to its own origin over HTTP/2: %v", err)
	}
	got := posts()
	if len(got) != 2 || !strings.HasPrefix(got[1], `POST /mcp HTTP/2 "Bearer s3cret" {"jsonrpc":"2.0","id":2,"method":"tools/call"`) {
		t.Errorf("the server got %q; want the POST to /moved, then the same over HTTP/2 to /mcp", got)
	}

	tr = newTransport(t, srv.URL+"/downgrade", Options{Common: httpopt.Common{HTTPClient: srv.Client(), Header: hostileHeaders(), Reconnect: tiny()}})
	err := sendErr(tr, request(3, "tools/call"))
	re, ok := errors.AsType[*jsonrpc.RedirectError](err)
	if !ok || re.Reason != jsonrpc.RedirectCrossOrigin || errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Fatalf("a redirect from https to http on the same host and port: %v; want a cross-origin *jsonrpc.RedirectError, not outcome unknown", err)
	}
	if got := posts(); len(got) != 1 {
		t.Errorf("the server got %q; want the redirected POST alone", got)
	}
}

package modern

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/anymcp/anymcp/httpopt"
	"github.com/anymcp/anymcp/internal/redirecttest"
	"github.com/anymcp/anymcp/jsonrpc"
)

// hostileHeaders are the credentials a redirect must never carry away.
func hostileHeaders() http.Header {
	return http.Header{"Authorization": {"Bearer s3cret"}, "X-Custom": {"private"}}
}

// hostileMCP serves like mcp("s1"), except that requests for which
// redirect says so are answered with c's redirect to another origin; it
// counts the POSTs of each method.
func hostileMCP(t *testing.T, c redirecttest.Case, redirect func(r *http.Request, m *jsonrpc.Message) bool) (*redirecttest.Server, *methodCounts) {
	counts := &methodCounts{}
	var s *redirecttest.Server
	inner := mcp("s1")
	s = redirecttest.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m, _ := jsonrpc.DecodeMessage(body)
		counts.add(r.Method, m)
		if redirect(r, m) {
			s.Redirect(w, c, "/mcp")
			return
		}
		inner(w, r, body)
	}))
	return s, counts
}

type methodCounts struct{ toolsCall, initialize, get, del atomic.Int64 }

func (c *methodCounts) add(method string, m *jsonrpc.Message) {
	switch {
	case method == http.MethodGet:
		c.get.Add(1)
	case method == http.MethodDelete:
		c.del.Add(1)
	case m != nil && m.Method == "tools/call":
		c.toolsCall.Add(1)
	case m != nil && m.Method == "initialize":
		c.initialize.Add(1)
	}
}

func newHostile(t *testing.T, url string) *Transport {
	t.Helper()
	tr, err := New(url+"/mcp", Options{Common: httpopt.Common{Header: hostileHeaders(), Reconnect: tiny()}})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestRedirectInitialize: an initialize POST redirected to another origin
// fails with a *jsonrpc.RedirectError, and nothing reaches that origin.
func TestRedirectInitialize(t *testing.T) {
	for _, c := range redirecttest.Cases() {
		t.Run(c.Name(), func(t *testing.T) {
			s, counts := hostileMCP(t, c, func(r *http.Request, m *jsonrpc.Message) bool { return r.Method == http.MethodPost })
			tr := newHostile(t, s.URL)
			defer tr.Close()
			err := sendErr(tr, initialize())
			redirecttest.Refused(t, err, c, http.MethodPost)
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("the error holds the credential: %v", err)
			}
			if n := counts.initialize.Load(); n != 1 {
				t.Errorf("initialize POSTed %d times, want 1", n)
			}
			s.Untouched(t)
		})
	}
}

// TestRedirectMidSession: a tools/call redirected to another origin after
// a normal handshake fails once with a *jsonrpc.RedirectError: not sent
// there, not read as an expired session, not sent again; the session goes
// on.
func TestRedirectMidSession(t *testing.T) {
	for _, c := range redirecttest.Cases() {
		t.Run(c.Name(), func(t *testing.T) {
			s, counts := hostileMCP(t, c, func(r *http.Request, m *jsonrpc.Message) bool {
				return m != nil && m.Method == "tools/call"
			})
			tr, err := New(s.URL+"/mcp", Options{Common: httpopt.Common{Header: hostileHeaders(), Reconnect: tiny()}})
			if err != nil {
				t.Fatal(err)
			}
			ch := recvLoop(t, tr)
			handshake(t, tr, ch)
			err = sendErr(tr, request(2, "tools/call"))
			redirecttest.Refused(t, err, c, http.MethodPost)
			if errors.Is(err, jsonrpc.ErrSessionExpired) {
				t.Errorf("a refused redirect reads as an expired session: %v", err)
			}
			if n := counts.toolsCall.Load(); n != 1 {
				t.Errorf("tools/call POSTed %d times, want 1", n)
			}
			if tr.SessionID() != "s1" {
				t.Errorf("session %q after the redirect, want s1", tr.SessionID())
			}
			send(t, tr, request(3, "ping"))
			if got := describe(next(t, ch)); got != `response 3 {"ok":true}` {
				t.Errorf("ping answered by %s", got)
			}
			s.Untouched(t)
		})
	}
}

// TestRedirectGETStreamAndDelete: the standalone GET stream and the DELETE
// at Close, redirected to another origin, send nothing there; the GET is
// not asked for again.
func TestRedirectGETStreamAndDelete(t *testing.T) {
	for _, c := range redirecttest.Cases() {
		t.Run(c.Name(), func(t *testing.T) {
			s, counts := hostileMCP(t, c, func(r *http.Request, m *jsonrpc.Message) bool {
				return r.Method == http.MethodGet || r.Method == http.MethodDelete
			})
			tr := newHostile(t, s.URL)
			ch := recvLoop(t, tr)
			handshake(t, tr, ch)
			// A request after the GET was refused: had it been retried,
			// the retry would have had time to run.
			send(t, tr, request(2, "ping"))
			next(t, ch)
			redirecttest.Refused(t, tr.Close(), c, http.MethodDelete)
			if n := counts.get.Load(); n != 1 {
				t.Errorf("the GET stream was asked for %d times, want 1", n)
			}
			if n := counts.del.Load(); n != 1 {
				t.Errorf("DELETE sent %d times, want 1", n)
			}
			s.Untouched(t)
		})
	}
}

// TestRedirectedNotFound: a 404 that answers a same-origin redirect of a
// request carrying the session is an HTTP error, not an expired session:
// the session is kept and the next request carries it.
func TestRedirectedNotFound(t *testing.T) {
	inner := mcp("s1")
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		switch {
		case r.URL.Path == "/gone":
			http.NotFound(w, r)
		case strings.Contains(string(body), `"tools/call"`):
			http.Redirect(w, r, "/gone", http.StatusTemporaryRedirect)
		default:
			inner(w, r, body)
		}
	})
	tr, ch := dial(t, s, Options{})
	handshake(t, tr, ch)
	err := sendErr(tr, request(2, "tools/call"))
	var he *jsonrpc.HTTPError
	if !errors.As(err, &he) || he.StatusCode != http.StatusNotFound {
		t.Fatalf("err = %v, want a 404 *jsonrpc.HTTPError", err)
	}
	if errors.Is(err, jsonrpc.ErrSessionExpired) {
		t.Fatalf("a redirected 404 reads as an expired session: %v", err)
	}
	send(t, tr, request(3, "ping"))
	next(t, ch)
	reqs := s.Requests()
	if last := reqs[len(reqs)-1]; last.Header.Get("Mcp-Session-Id") != "s1" {
		t.Errorf("the request after the 404 carried session %q, want s1", last.Header.Get("Mcp-Session-Id"))
	}
}

// TestRedirectResume: the GET that resumes a broken answer stream,
// redirected to another origin, ends the call at once as outcome unknown
// with the *jsonrpc.RedirectError; it is not tried again, and nothing
// reaches the other origin.
func TestRedirectResume(t *testing.T) {
	for _, c := range redirecttest.Cases() {
		t.Run(c.Name(), func(t *testing.T) {
			var resumes atomic.Int64
			inner := mcp("s1")
			var s *redirecttest.Server
			s = redirecttest.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				switch {
				case r.Method == http.MethodGet && r.Header.Get("Last-Event-Id") != "":
					resumes.Add(1)
					s.Redirect(w, c, "/mcp")
				case strings.Contains(string(body), `"tools/call"`):
					ev := startSSE(w)
					ev("id: e1\ndata: \n\n") // a priming event, then the stream ends
				default:
					inner(w, r, body)
				}
			}))
			tr := newHostile(t, s.URL)
			ch := recvLoop(t, tr)
			handshake(t, tr, ch)
			err := sendErr(tr, request(2, "tools/call"))
			redirecttest.Refused(t, err, c, http.MethodGet)
			if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
				t.Errorf("err = %v, want outcome unknown", err)
			}
			if n := resumes.Load(); n != 1 {
				t.Errorf("%d resuming GETs, want 1", n)
			}
			s.Untouched(t)
		})
	}
}

// recvLoop runs tr's Recv loop until tr is closed (at the end of the test).
func recvLoop(t *testing.T, tr *Transport) <-chan *jsonrpc.Message {
	ch := make(chan *jsonrpc.Message, 100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			m, err := tr.Recv()
			if err != nil {
				var sl *jsonrpc.SessionLostError
				if errors.As(err, &sl) {
					continue
				}
				return
			}
			ch <- m
		}
	}()
	t.Cleanup(func() {
		tr.Close()
		<-done
	})
	return ch
}

// TestRedirectSameOrigin: within the endpoint's origin, a 307 or 308 of a
// POST is followed with its body and headers; a 302 or 303, which would
// turn it into a GET, is refused; a redirect loop ends after
// origin.MaxRedirects redirects with an error.
func TestRedirectSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		status int
		loop   bool
		want   jsonrpc.RedirectReason // 0: followed
		posts  int                    // POSTs the server receives
	}{
		{http.StatusTemporaryRedirect, false, 0, 2},
		{http.StatusPermanentRedirect, false, 0, 2},
		{http.StatusFound, false, jsonrpc.RedirectMethodChange, 1},
		{http.StatusSeeOther, false, jsonrpc.RedirectMethodChange, 1},
		{http.StatusTemporaryRedirect, true, jsonrpc.RedirectTooMany, 6},
	} {
		t.Run(http.StatusText(tc.status)+map[bool]string{true: " loop"}[tc.loop], func(t *testing.T) {
			inner := mcp("s1")
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				if r.URL.Path == "/real" && !tc.loop {
					if r.Header.Get("Authorization") != "Bearer s3cret" {
						http.Error(w, "no credentials", http.StatusUnauthorized)
						return
					}
					inner(w, r, body)
					return
				}
				http.Redirect(w, r, "/real", tc.status)
			})
			tr, ch := dial(t, s, Options{Common: httpopt.Common{Header: hostileHeaders()}})
			err := sendErr(tr, initialize())
			if tc.want == 0 {
				if err != nil {
					t.Fatal(err)
				}
				next(t, ch)
				if tr.SessionID() != "s1" {
					t.Errorf("session %q", tr.SessionID())
				}
			} else {
				var re *jsonrpc.RedirectError
				if !errors.As(err, &re) || re.Reason != tc.want {
					t.Fatalf("err = %v, want a RedirectError with reason %d", err, tc.want)
				}
			}
			if n := s.Count(http.MethodPost); n != tc.posts {
				t.Errorf("%d POSTs, want %d", n, tc.posts)
			}
			if n := s.Count(http.MethodGet); n != 0 {
				t.Errorf("%d GETs: a POST was turned into a GET", n)
			}
		})
	}
}

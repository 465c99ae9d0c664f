// Package redirecttest is the hostile server of the redirect tests of the
// HTTP transports: an origin on 127.0.0.1 that answers some request with a
// redirect to another origin — another port, or the same server under the
// host name localhost — and counts every request that reaches that other
// origin, which must be none.
package redirecttest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/anymcp/anymcp/jsonrpc"
)

// Other is the origin a hostile redirect points to.
type Other int

const (
	// OtherPort is another server on 127.0.0.1, on another port.
	OtherPort Other = iota
	// OtherHost is the hostile server itself under the host name
	// localhost: same address, another origin.
	OtherHost
	// OtherLookalike is the host name Lookalike, which a client dialing
	// through LookalikeClient reaches as the sink: for a test that names
	// the server by NamedURL. Not one of Cases.
	OtherLookalike
)

func (o Other) String() string {
	switch o {
	case OtherHost:
		return "other host name"
	case OtherLookalike:
		return "lookalike host name"
	}
	return "other port"
}

// Case is one hostile redirect.
type Case struct {
	Status int
	Other  Other
}

// Name is the case's subtest name, e.g. "307 to other port".
func (c Case) Name() string { return strconv.Itoa(c.Status) + " to " + c.Other.String() }

// Cases are 307, 308 and 302, each to another port and to another host
// name.
func Cases() []Case {
	var cs []Case
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect, http.StatusFound} {
		for _, o := range []Other{OtherPort, OtherHost} {
			cs = append(cs, Case{Status: status, Other: o})
		}
	}
	return cs
}

// Server is the hostile origin. Requests to it under its own address go to
// the handler the test gave; requests that reach another origin (the sink
// on another port, or this server under the name localhost) are recorded,
// answered 404 and go no further.
type Server struct {
	*httptest.Server
	sink *httptest.Server

	mu      sync.Mutex
	reached []string
}

// New starts a hostile server that serves h, and its other origin; both
// stop when the test ends.
func New(t testing.TB, h http.Handler) *Server {
	t.Helper()
	s := &Server{}
	s.sink = httptest.NewServer(http.HandlerFunc(s.record))
	t.Cleanup(s.sink.Close)
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(strings.ToLower(r.Host), "localhost") {
			s.record(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}))
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// record notes a request that reached another origin: what a thief would
// have got.
func (s *Server) record(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	s.mu.Lock()
	s.reached = append(s.reached, fmt.Sprintf("%s http://%s%s (Authorization %q, X-Custom %q, %d bytes of body)",
		r.Method, r.Host, r.URL.RequestURI(), r.Header.Get("Authorization"), r.Header.Get("X-Custom"), len(body)))
	s.mu.Unlock()
	http.NotFound(w, r)
}

// Elsewhere returns the URL of path on the other origin o.
func (s *Server) Elsewhere(o Other, path string) string {
	switch o {
	case OtherHost:
		return s.under("localhost", path)
	case OtherLookalike:
		return s.LookalikeURL(path)
	}
	return s.sink.URL + path
}

// Redirect answers with c's redirect to path on its other origin.
func (s *Server) Redirect(w http.ResponseWriter, c Case, path string) {
	w.Header().Set("Location", s.Elsewhere(c.Other, path))
	w.WriteHeader(c.Status)
}

// Reached returns the requests that reached another origin.
func (s *Server) Reached() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reached...)
}

// Untouched fails t when any request reached another origin.
func (s *Server) Untouched(t testing.TB) {
	t.Helper()
	for _, r := range s.Reached() {
		t.Errorf("another origin received %s", r)
	}
}

// Refused fails t unless err holds a *jsonrpc.RedirectError that refuses
// c's redirect of a method request to another origin.
func Refused(t testing.TB, err error, c Case, method string) *jsonrpc.RedirectError {
	t.Helper()
	var re *jsonrpc.RedirectError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want a *jsonrpc.RedirectError", err)
	}
	if re.Reason != jsonrpc.RedirectCrossOrigin || re.Status != c.Status || re.Method != method {
		t.Errorf("RedirectError: reason %d, status %d, method %s; want cross-origin, %d, %s",
			re.Reason, re.Status, re.Method, c.Status, method)
	}
	if !strings.Contains(err.Error(), "another origin") {
		t.Errorf("the error does not say why: %v", err)
	}
	return re
}

// errNoDial ends DialTarget's request at its dial.
var errNoDial = errors.New("redirect test server: not dialing")

// DialTarget returns where net/http connects to request u: its scheme and
// the address its transport dials (the host name as it is looked up, in
// its IDNA form when it is not ASCII, and the port), with ASCII letters in
// lower case since DNS ignores their case; "" when net/http would not dial
// at all (no host, an unsupported scheme, a malformed host). It asks a
// transport whose dialer notes the address and fails, so nothing is sent:
// the tests of the origin rule hold it to what net/http does, not to a
// second reading of that rule.
func DialTarget(u *url.URL) string {
	var (
		mu   sync.Mutex
		addr string
	)
	t := &http.Transport{
		DialContext: func(_ context.Context, _, a string) (net.Conn, error) {
			mu.Lock()
			addr = a
			mu.Unlock()
			return nil, errNoDial
		},
	}
	defer t.CloseIdleConnections()
	c := *u
	req := &http.Request{Method: http.MethodGet, URL: &c, Header: http.Header{}}
	if resp, err := t.RoundTrip(req); err == nil {
		resp.Body.Close()
	}
	mu.Lock()
	defer mu.Unlock()
	if addr == "" {
		return ""
	}
	return strings.ToLower(u.Scheme) + " " + lowerASCII(addr)
}

// lowerASCII returns s with its ASCII letters in lower case.
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Named and Lookalike are two spellings of a host name that
// strings.ToLower makes one ("İ" lower-cased is "i") but net/http looks up
// as two: Named as it is, Lookalike in its IDNA form, xn--ibm-8dc.test.
const (
	Named     = "ibm.test"
	Lookalike = "\u0130bm.test"
)

// NamedURL returns the URL of path on this server under the host name
// Named, and LookalikeURL the same under Lookalike: another origin, which
// the client of LookalikeClient reaches as the sink.
func (s *Server) NamedURL(path string) string { return s.under(Named, path) }

// LookalikeURL: see NamedURL.
func (s *Server) LookalikeURL(path string) string { return s.under(Lookalike, path) }

func (s *Server) under(host, path string) string {
	_, port, _ := net.SplitHostPort(s.Listener.Addr().String())
	return "http://" + net.JoinHostPort(host, port) + path
}

// LookalikeClient returns an HTTP client whose dialer stands in for DNS:
// the host name Named is this server's address, and every other name the
// sink's, which records what reaches it.
func (s *Server) LookalikeClient() *http.Client {
	var d net.Dialer
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			to := s.sink.Listener.Addr().String()
			if host, _, _ := net.SplitHostPort(addr); host == Named {
				to = s.Listener.Addr().String()
			}
			return d.DialContext(ctx, network, to)
		},
	}}
}

package legacy

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/httpopt"
	"github.com/anymcp/anymcp/internal/origin"
	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/jsonrpc"
)

// TestDialEndpoint: the endpoint event's URI, relative or absolute, with
// white space around it, is resolved against the SSE URL, and Send POSTs
// there.
func TestDialEndpoint(t *testing.T) {
	tests := []struct {
		name     string
		sse      string // path of the SSE URL
		endpoint func(base string) string
		want     string // path and query the POST must reach
	}{
		{"absolute path", "/sse", func(string) string { return "/message?sessionId=abc" }, "/message?sessionId=abc"},
		{"white space", "/sse", func(string) string { return " \t/message?sessionId=ws \t" }, "/message?sessionId=ws"},
		{"relative path", "/mcp/sse", func(string) string { return "messages/?session_id=rel" }, "/mcp/messages/?session_id=rel"},
		{"dot segments", "/a/b/sse", func(string) string { return "../post?x=1" }, "/a/post?x=1"},
		{"absolute URL", "/sse", func(base string) string { return base + "/abs?sessionId=1" }, "/abs?sessionId=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSSEServer(t)
			s.endpoint = tt.endpoint(s.URL)
			tr, _ := dial(t, s.URL+tt.sse, Options{})
			if want := s.URL + tt.want; tr.Endpoint() != want {
				t.Errorf("Endpoint() = %q, want %q", tr.Endpoint(), want)
			}
			send(t, tr, notification("notifications/initialized"))
			reqs := s.Requests()
			if len(reqs) != 2 || reqs[1].Method != http.MethodPost || reqs[1].Path != tt.want {
				t.Fatalf("requests %+v, want GET then POST %s", reqs, tt.want)
			}
		})
	}
}

// TestDialDefaultPort: http://host:80 is the same origin as http://host.
// Only a URL without a port can show that, so the test dials a name that
// the client's RoundTripper sends to the test server.
func TestDialDefaultPort(t *testing.T) {
	s := newSSEServer(t)
	s.endpoint = "http://mcp.test:80/p?s=1"
	tr, _ := dial(t, "http://mcp.test/sse", Options{Common: httpopt.Common{HTTPClient: redirectTo(t, s.URL)}})
	if tr.Endpoint() != s.endpoint {
		t.Errorf("Endpoint() = %q, want %q", tr.Endpoint(), s.endpoint)
	}
	send(t, tr, notification("notifications/initialized"))
	if got := s.Requests()[1]; got.Path != "/p?s=1" {
		t.Errorf("POST reached %q", got.Path)
	}
}

// redirectTo returns a client whose requests, whatever their host, go to
// the server at base (the Host header keeps the name asked for).
func redirectTo(t *testing.T, base string) *http.Client {
	u, _ := url.Parse(base)
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		r = r.Clone(r.Context())
		r.URL.Host = u.Host
		return tr.RoundTrip(r)
	})}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestDialAfterRedirect: a relative endpoint resolves against the URL the
// stream came from after redirects (/sse → /sse/).
func TestDialAfterRedirect(t *testing.T) {
	s := newSSEServer(t)
	s.endpoint = "messages?s=1"
	mux := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.URL.Path == "/sse" {
			http.Redirect(w, r, "/sse/", http.StatusMovedPermanently)
			return
		}
		s.Config.Handler.ServeHTTP(w, r)
	})
	tr, _ := dial(t, mux.URL+"/sse", Options{})
	if want := mux.URL + "/sse/messages?s=1"; tr.Endpoint() != want {
		t.Errorf("Endpoint() = %q, want %q", tr.Endpoint(), want)
	}
}

func TestSameOrigin(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{"http://h/sse", "http://h/message", true},
		{"http://h/sse", "http://h:80/message", true},
		{"https://h/sse", "https://h:443/m", true},
		{"http://H.example/sse", "http://h.EXAMPLE/m", true},
		{"http://[::1]:8080/sse", "http://[::1]:8080/m", true},
		{"http://h/sse", "https://h/m", false},
		{"http://h:8080/sse", "http://h:8081/m", false},
		{"http://h/sse", "http://h:443/m", false},
		{"https://h/sse", "https://h:80/m", false},
		{"http://h/sse", "http://g/m", false},
		{"http://h/sse", "http://h.evil/m", false},
		{"http://127.0.0.1/sse", "http://localhost/m", false},
		{"http://h/sse", "mailto:h", false},
	}
	for _, tt := range tests {
		a, _ := url.Parse(tt.a)
		b, _ := url.Parse(tt.b)
		if got := origin.Same(a, b); got != tt.same {
			t.Errorf("origin.Same(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.same)
		}
	}
}

// TestUnparsableEndpointNotShown: an endpoint event that does not parse as
// a URI is refused with ErrNoEndpoint, and its text, which may hold the
// session id, is not in the error.
func TestUnparsableEndpointNotShown(t *testing.T) {
	home, _ := url.Parse("http://h/sse")
	for _, data := range []string{"/mess%zzage?sessionId=s3cr3t", "http://u:s3cr3t@h:port/m", "http://[::1/m?k=s3cr3t"} {
		_, err := resolveEndpoint([]byte(data), home, home)
		if !errors.Is(err, ErrNoEndpoint) {
			t.Errorf("%q: err = %v, want ErrNoEndpoint", data, err)
			continue
		}
		if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%q: the error shows it: %v", data, err)
		}
	}
}

// TestDialCrossOrigin: an endpoint on another origin is refused before any
// request goes there, and the GET stream is closed.
func TestDialCrossOrigin(t *testing.T) {
	other := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.WriteHeader(http.StatusAccepted)
	})
	otherURL, _ := url.Parse(other.URL)
	tests := []struct {
		name     string
		endpoint func(s *sseServer) string
	}{
		{"other port", func(*sseServer) string { return other.URL + "/message?sessionId=x" }},
		{"scheme-relative", func(*sseServer) string { return "//" + otherURL.Host + "/message" }},
		{"other scheme", func(s *sseServer) string { return strings.Replace(s.URL, "http:", "https:", 1) + "/message" }},
		{"other host name", func(s *sseServer) string {
			return strings.Replace(s.URL, "127.0.0.1", "localhost", 1) + "/message"
		}},
		{"user info host trick", func(s *sseServer) string {
			u, _ := url.Parse(s.URL)
			return "http://" + u.Host + "@" + otherURL.Host + "/message"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSSEServer(t)
			s.endpoint = tt.endpoint(s)
			err := dialErr(t, s.URL+"/sse", Options{Common: httpopt.Common{Header: http.Header{"Authorization": {"Bearer secret"}}}})
			var ce *CrossOriginError
			if !errors.As(err, &ce) {
				t.Fatalf("Dial = %v, want a *CrossOriginError", err)
			}
			if ce.SSEURL != s.URL+"/sse" || !strings.Contains(ce.Endpoint, "/message") {
				t.Errorf("CrossOriginError = %+v", ce)
			}
			closed(t, "the GET stream to close", s.gone)
			if n := len(other.Requests()); n != 0 {
				t.Errorf("the other origin received %d requests", n)
			}
			if n := s.Count(http.MethodPost); n != 0 {
				t.Errorf("%d POSTs", n)
			}
		})
	}
}

// TestDialSlowEndpoint: Dial waits for an endpoint event that comes late,
// within ctx: the server sends it only once Dial waits for more of the
// stream after a comment.
func TestDialSlowEndpoint(t *testing.T) {
	commented, late := make(chan struct{}), make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if r.Method != http.MethodGet {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		send := startSSE(w)
		send(": waiting\n\n")
		close(commented)
		select {
		case <-late:
		case <-r.Context().Done():
			return
		}
		send(endpointEvent("/message"))
		<-r.Context().Done()
	})
	type dialed struct {
		tr  *Transport
		err error
	}
	done := make(chan dialed, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		tr, err := Dial(ctx, s.URL+"/sse", Options{})
		done <- dialed{tr, err}
	}()
	select {
	case <-commented:
	case <-time.After(wait):
		t.Fatal("the server got no GET")
	}
	testkit.BlockedIn(t, wait, "legacy.Dial") // it waits for more than the comment
	close(late)
	d := <-done
	if d.err != nil {
		t.Fatal(d.err)
	}
	defer d.tr.Close()
	if d.tr.Endpoint() != s.URL+"/message" {
		t.Errorf("Endpoint() = %q", d.tr.Endpoint())
	}
}

// TestDialTimeout: a server that never sends the endpoint event, or never
// even answers, makes Dial return ctx's error promptly, with the GET closed
// (goleak checks that no goroutine is left).
func TestDialTimeout(t *testing.T) {
	for _, headers := range []bool{true, false} {
		name := "no headers"
		if headers {
			name = "no endpoint event"
		}
		t.Run(name, func(t *testing.T) {
			gone := make(chan struct{})
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
				defer close(gone)
				if headers {
					startSSE(w)(": hello\n\n")
				}
				<-r.Context().Done()
			})
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()
			start := time.Now()
			tr, err := Dial(ctx, s.URL+"/sse", Options{})
			if err == nil {
				tr.Close()
				t.Fatal("Dial succeeded")
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Dial = %v, want context.DeadlineExceeded", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Dial took %v", d)
			}
			closed(t, "the GET to close", gone)
		})
	}
}

// TestDialNoEndpoint: a stream whose first event is not "endpoint", or
// that ends before one, or whose endpoint is empty, is ErrNoEndpoint.
func TestDialNoEndpoint(t *testing.T) {
	tests := []struct {
		name   string
		stream string
	}{
		{"message first", messageEvent(note("notifications/message")) + endpointEvent("/message")},
		{"unnamed event first", "data: /message\n\n"},
		{"empty stream", ""},
		{"only comments", ": hi\n\n: still here\n\n"},
		{"endpoint not dispatched", "event: endpoint\ndata: /message\n"},
		{"empty endpoint", "event: endpoint\ndata:\n\n"},
		{"blank endpoint", "event: endpoint\ndata:   \n\n"},
		{"not a URI", "event: endpoint\ndata: http://[::1\n\n"},
		{"endpoint over 8 KiB", "event: endpoint\ndata: /message?session=" + strings.Repeat("s", MaxEndpointLen) + "\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
				startSSE(w)(tt.stream)
			})
			err := dialErr(t, s.URL+"/sse", Options{})
			if !errors.Is(err, ErrNoEndpoint) {
				t.Fatalf("Dial = %v, want ErrNoEndpoint", err)
			}
			if s.Count(http.MethodPost) != 0 {
				t.Error("a POST was sent")
			}
		})
	}
}

// TestDialHTTPError: a GET answered with a status other than 2xx is a
// *jsonrpc.HTTPError with the status and a bounded excerpt of the body.
func TestDialHTTPError(t *testing.T) {
	tests := []struct {
		status  int
		body    string
		rpcCode int64
	}{
		{http.StatusNotFound, "404 page not found", 0},
		{http.StatusMethodNotAllowed, "", 0},
		{http.StatusUnauthorized, strings.Repeat("x", 5000), 0},
		{http.StatusBadRequest, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no session"}}`, -32600},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			})
			err := dialErr(t, s.URL+"/sse", Options{})
			var he *jsonrpc.HTTPError
			if !errors.As(err, &he) {
				t.Fatalf("Dial = %v, want a *jsonrpc.HTTPError", err)
			}
			if he.Method != http.MethodGet || he.StatusCode != tt.status || he.URL != s.URL+"/sse" {
				t.Errorf("HTTPError = %+v", he)
			}
			if len(he.Body) > 512 || !strings.HasPrefix(tt.body, he.Body) {
				t.Errorf("Body = %q (%d bytes)", he.Body, len(he.Body))
			}
			if tt.rpcCode != 0 && (he.RPCError == nil || he.RPCError.Code != tt.rpcCode) {
				t.Errorf("RPCError = %v, want code %d", he.RPCError, tt.rpcCode)
			}
		})
	}
}

// TestDialNotSSE: a 2xx answer that is not an event stream is a
// *NotSSEError that names what it was.
func TestDialNotSSE(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	})
	err := dialErr(t, s.URL+"/mcp", Options{})
	var ne *NotSSEError
	if !errors.As(err, &ne) {
		t.Fatalf("Dial = %v, want a *NotSSEError", err)
	}
	want := "GET " + s.URL + "/mcp → 200, not an SSE stream (application/json)"
	if ne.Error() != want || ne.Status != 200 || ne.ContentType != "application/json" {
		t.Errorf("NotSSEError %+v: %q, want %q", ne, ne.Error(), want)
	}
	if ne := (&NotSSEError{URL: "http://h/", Status: 204}); !strings.HasSuffix(ne.Error(), "(no content type)") {
		t.Errorf("without a content type: %q", ne.Error())
	}
}

// TestDialMediaTypeParameters: text/event-stream with parameters and in
// another case is an event stream.
func TestDialMediaTypeParameters(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		w.Header().Set("Content-Type", "Text/Event-Stream; charset=utf-8")
		w.Write([]byte(endpointEvent("/m")))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	dial(t, s.URL, Options{})
}

// TestDialBadURL: no request is made for a URL Dial cannot use.
func TestDialBadURL(t *testing.T) {
	for _, u := range []string{"ftp://h/sse", "http:///sse", "://x", "h/sse"} {
		if _, err := Dial(context.Background(), u, Options{}); err == nil {
			t.Errorf("Dial(%q) succeeded", u)
		}
	}
	// The error shows nothing of the URL's password or query, even when
	// it does not parse (url.Parse's error repeats it).
	for _, u := range []string{"ftp://u:pa55w0rd@h/sse?api_key=k3y", "http://u:pa55w0rd@h:port/sse?api_key=k3y"} {
		if _, err := Dial(context.Background(), u, Options{}); err == nil {
			t.Errorf("Dial(%q) succeeded", u)
		} else if strings.Contains(err.Error(), "pa55w0rd") || strings.Contains(err.Error(), "k3y") {
			t.Errorf("Dial(%q): the error shows the URL's secrets: %v", u, err)
		}
	}
}

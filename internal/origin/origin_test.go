package origin

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/anymcp/anymcp/jsonrpc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func mustParse(t testing.TB, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("parse %q: %v", raw, err)
	}
	return u
}

func TestOf(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://example.com/mcp", "http://example.com:80"},
		{"HTTP://Example.COM:80/x?y#z", "http://example.com:80"},
		{"https://example.com", "https://example.com:443"},
		{"https://example.com:8443/a", "https://example.com:8443"},
		{"http://user:pass@127.0.0.1:9/", "http://127.0.0.1:9"},
		{"http://[::1]/mcp", "http://[::1]:80"},
		{"https://[2001:DB8::1]:8443/", "https://[2001:db8::1]:8443"},
		{"ws://example.com/x", "ws://example.com"},
		{"ws://[::1]/x", "ws://[::1]"},
		{"http://[FE80::1%25Eth0]:8080/", "http://[fe80::1%25Eth0]:8080"},
	} {
		if got := Of(mustParse(t, tc.in)); got != tc.want {
			t.Errorf("Of(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSame(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"http://h/mcp", "http://h:80/other?x=1", true},
		{"http://H/mcp", "HTTP://h/", true},
		{"https://h/", "https://h:443/", true},
		{"http://[::1]:8080/", "http://[0:0:0:0:0:0:0:1]:8080/", false}, // spelled differently: refused, never wrongly allowed
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8081/", false},
		{"http://127.0.0.1:8080/", "http://localhost:8080/", false},
		{"https://h/", "http://h/", false},
		{"https://h/", "http://h:443/", false},
		{"http://h/", "/relative", false},
		{"http://h/", "http:opaque", false},
		{"/a", "/b", false},
		{"//h/a", "//h/b", false},
	} {
		a, b := mustParse(t, tc.a), mustParse(t, tc.b)
		if got := Same(a, b); got != tc.want {
			t.Errorf("Same(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := Same(b, a); got != tc.want {
			t.Errorf("Same(%q, %q) = %v, want %v", tc.b, tc.a, got, tc.want)
		}
	}
}

func TestRedact(t *testing.T) {
	u := mustParse(t, "http://alice:s3cret@h:1/m?sessionId=abc&token&x=#frag")
	got := Redact(u)
	for _, secret := range []string{"alice", "s3cret", "abc", "token", "frag"} {
		if strings.Contains(got, secret) {
			t.Errorf("Redact = %q: holds %q", got, secret)
		}
	}
	if want := "http://h:1/m?sessionId=…&…&x=…"; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
}

// TestRedactNoAuthority: a URL whose scheme has no "//" after it has no
// user information to url.Parse, which keeps "user:password@host" as the
// opaque part or the path; Redact shows neither what comes before its "@".
func TestRedactNoAuthority(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http:user:pa55w0rd@h/mcp", "http:h/mcp"},
		{"https:user:pa55w0rd@h:8443/mcp?api_key=k3y#frag", "https:h:8443/mcp?api_key=…"},
		{"http:user:p@55w0rd@h/mcp", "http:h/mcp"},
		{"http:/user:pa55w0rd@h/mcp", "http:/h/mcp"},
		{"http:///user:pa55w0rd@h/mcp", "http:///h/mcp"},
		{"http:localhost:8080/mcp", "http:localhost:8080/mcp"},
		{"/path/@scope/pkg", "/path/@scope/pkg"},
	} {
		got := Redact(mustParse(t, tc.in))
		if got != tc.want || strings.Contains(got, "55w0rd") {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := RedactString(tc.in); got != tc.want {
			t.Errorf("RedactString(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// counter is an origin that counts every request it receives.
type counter struct {
	*httptest.Server
	n atomic.Int64
}

func newCounter(t *testing.T) *counter {
	c := &counter{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.n.Add(1)
		io.WriteString(w, "reached")
	}))
	t.Cleanup(c.Close)
	return c
}

// redirector answers every request whose path is not /final with status
// and Location loc(self), self being its own URL; /final answers 200 with
// the method, body and Authorization it got, and so does any request after
// the 50th (a redirect loop that nothing stops). hits counts the requests that
// reached it under its own address, foreign those that reached it under
// the host name localhost (another origin).
func redirector(t *testing.T, status int, loc func(self *url.URL) string) (s *httptest.Server, hits, foreign *atomic.Int64) {
	hits, foreign = new(atomic.Int64), new(atomic.Int64)
	s = httptest.NewUnstartedServer(nil)
	self := mustParse(t, "http://"+s.Listener.Addr().String())
	s.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.Host, "localhost") {
			foreign.Add(1)
		} else {
			hits.Add(1)
		}
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/final" || hits.Load() > 50 {
			io.WriteString(w, r.Method+" "+string(body)+" "+r.Header.Get("Authorization"))
			return
		}
		w.Header().Set("Location", loc(self))
		w.WriteHeader(status)
	})
	s.Start()
	t.Cleanup(s.Close)
	return s, hits, foreign
}

func do(t *testing.T, c *http.Client, method, target string) (string, error) {
	t.Helper()
	var body io.Reader
	if method != http.MethodGet {
		body = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`)
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer secret")
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b), nil
}

// TestGuardCrossOrigin: a redirect to another port or another host name
// is refused before anything is sent there, whatever its status and the
// method.
func TestGuardCrossOrigin(t *testing.T) {
	for _, status := range []int{301, 302, 303, 307, 308} {
		for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			for _, other := range []string{"port", "host"} {
				t.Run(strconv.Itoa(status)+"/"+method+"/"+other, func(t *testing.T) {
					sink := newCounter(t)
					s, _, foreign := redirector(t, status, func(self *url.URL) string {
						if other == "port" {
							return sink.URL + "/final"
						}
						return "http://localhost:" + self.Port() + "/final"
					})
					self := mustParse(t, s.URL)
					_, err := do(t, Guard(nil), method, s.URL+"/mcp")
					re, ok := errors.AsType[*jsonrpc.RedirectError](err)
					if !ok {
						t.Fatalf("err = %v, want a *jsonrpc.RedirectError", err)
					}
					if re.Reason != jsonrpc.RedirectCrossOrigin || re.Status != status || re.Method != method {
						t.Errorf("RedirectError = %+v", re)
					}
					if n := sink.n.Load() + foreign.Load(); n != 0 {
						t.Errorf("the other origin received %d requests, want none", n)
					}
					msg := err.Error()
					if !strings.Contains(msg, Of(self)) || !strings.Contains(msg, "another origin") {
						t.Errorf("error %q does not name the origin and the reason", msg)
					}
				})
			}
		}
	}
}

// TestGuardSameOrigin: 307 and 308 within the origin are followed with
// the method, the body and the headers; 301/302/303 turn GET into GET and
// are followed, but are refused for a POST or a DELETE.
func TestGuardSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		status int
		method string
		want   string // the body /final answers; "" when refused
	}{
		{307, http.MethodPost, `POST {"jsonrpc":"2.0","id":1,"method":"tools/call"} Bearer secret`},
		{308, http.MethodPost, `POST {"jsonrpc":"2.0","id":1,"method":"tools/call"} Bearer secret`},
		{307, http.MethodGet, "GET  Bearer secret"},
		{302, http.MethodGet, "GET  Bearer secret"},
		{301, http.MethodGet, "GET  Bearer secret"},
		{301, http.MethodPost, ""},
		{302, http.MethodPost, ""},
		{303, http.MethodPost, ""},
		{302, http.MethodDelete, ""},
	} {
		t.Run(strconv.Itoa(tc.status)+"/"+tc.method, func(t *testing.T) {
			s, hits, _ := redirector(t, tc.status, func(*url.URL) string { return "/final" })
			got, err := do(t, Guard(nil), tc.method, s.URL+"/mcp")
			if tc.want != "" {
				if err != nil || got != tc.want {
					t.Fatalf("got %q, %v; want %q", got, err, tc.want)
				}
				return
			}
			re, ok := errors.AsType[*jsonrpc.RedirectError](err)
			if !ok || re.Reason != jsonrpc.RedirectMethodChange || re.Status != tc.status {
				t.Fatalf("err = %v, want a method-change *jsonrpc.RedirectError", err)
			}
			if n := hits.Load(); n != 1 {
				t.Errorf("the server received %d requests, want 1 (the GET never sent)", n)
			}
		})
	}
}

// TestGuardLoop: a redirect loop on the same origin ends after
// MaxRedirects redirects with an error.
func TestGuardLoop(t *testing.T) {
	for _, status := range []int{307, 308} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			s, hits, _ := redirector(t, status, func(*url.URL) string { return "/loop" })
			_, err := do(t, Guard(nil), http.MethodPost, s.URL+"/mcp")
			re, ok := errors.AsType[*jsonrpc.RedirectError](err)
			if !ok || re.Reason != jsonrpc.RedirectTooMany {
				t.Fatalf("err = %v, want a too-many *jsonrpc.RedirectError", err)
			}
			if n := hits.Load(); n != MaxRedirects+1 {
				t.Errorf("the server received %d requests, want %d", n, MaxRedirects+1)
			}
		})
	}
}

// TestGuardKeepsHostClient: the host's client is not changed, and its own
// CheckRedirect still runs, after the policy and only for redirects the
// policy allows.
func TestGuardKeepsHostClient(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	hostErr := errors.New("host says no")
	check := func(req *http.Request, via []*http.Request) error {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, req.URL.Path)
		if req.URL.Path == "/refused-by-host" {
			return hostErr
		}
		return nil
	}
	rt := http.DefaultTransport
	host := &http.Client{Transport: rt, CheckRedirect: check, Timeout: 7}
	before := *host
	g := Guard(host)
	if g == host {
		t.Fatal("Guard returned the host's client")
	}
	if host.Transport != before.Transport || host.Timeout != before.Timeout ||
		host.Jar != before.Jar || host.CheckRedirect == nil {
		t.Fatal("Guard changed the host's client")
	}
	if g.Transport != rt || g.Timeout != 7 {
		t.Error("the copy lost the host's Transport or Timeout")
	}
	g.Timeout = 0

	sink := newCounter(t)
	for _, tc := range []struct {
		loc     string
		wantErr error
		asked   bool
	}{
		{"/final", nil, true},
		{"/refused-by-host", hostErr, true},
		{sink.URL + "/final", nil, false}, // refused by the policy first: the host is not asked
	} {
		mu.Lock()
		asked = nil
		mu.Unlock()
		s, _, _ := redirector(t, 307, func(*url.URL) string { return tc.loc })
		_, err := do(t, g, http.MethodPost, s.URL+"/mcp")
		switch {
		case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
			t.Errorf("%s: err = %v, want %v", tc.loc, err, tc.wantErr)
		case tc.wantErr == nil && tc.asked && err != nil:
			t.Errorf("%s: err = %v", tc.loc, err)
		case !tc.asked && err == nil:
			t.Errorf("%s: followed", tc.loc)
		}
		mu.Lock()
		if got := len(asked) > 0; got != tc.asked {
			t.Errorf("%s: host CheckRedirect asked = %v, want %v", tc.loc, got, tc.asked)
		}
		mu.Unlock()
	}
	if n := sink.n.Load(); n != 0 {
		t.Errorf("the other origin received %d requests", n)
	}
}

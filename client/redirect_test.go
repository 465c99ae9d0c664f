package client_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/internal/redirecttest"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/legacy"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/testservers"
)

// hostileProxy is a real test server behind a proxy that answers the
// first POST whose body names method (or every POST, for "*") with c's
// redirect to another origin, and passes everything else on.
type hostileProxy struct {
	*redirecttest.Server
	stats      func() testservers.Stats
	redirected atomic.Int64
}

// upstream is one kind of real server behind the proxy.
type upstream struct {
	name   string
	policy negotiate.TransportPolicy
	start  func(t *testing.T) (string, func() testservers.Stats)
}

var upstreams = []upstream{
	{"streamable-http", negotiate.StreamableOnly, func(t *testing.T) (string, func() testservers.Stats) {
		s := testservers.StartStreamable(testservers.HTTPOptions{Priming: true})
		t.Cleanup(s.Close)
		return s.URL, s.Server().Stats
	}},
	{"http+sse", negotiate.SSEOnly, func(t *testing.T) (string, func() testservers.Stats) {
		s := testservers.StartLegacy(testservers.LegacyOptions{})
		t.Cleanup(s.Close)
		return s.URL, s.Server().Stats
	}},
}

func newHostileProxy(t *testing.T, up upstream, c redirecttest.Case, method string) (*hostileProxy, string) {
	raw, stats := up.start(t)
	target, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	h := &hostileProxy{stats: stats}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(&url.URL{Scheme: target.Scheme, Host: target.Host})
	}}
	h.Server = redirecttest.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if (method == "*" || strings.Contains(string(body), `"method":"`+method+`"`)) && h.redirected.Add(1) == 1 {
				h.Redirect(w, c, r.URL.RequestURI())
				return
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	return h, h.URL + target.Path
}

func hostileOptions(up upstream) []client.Option {
	return []client.Option{
		client.WithHeader("Authorization", "Bearer s3cret"),
		client.WithHeader("X-Custom", "private"),
		client.WithTransportPolicy(up.policy),
		client.WithReconnectPolicy(fastPolicy),
	}
}

// TestDialRedirect: client.Dial whose initialize POST (to the Streamable
// HTTP endpoint, or to the endpoint an HTTP+SSE stream announced) is
// redirected to another origin fails with a *jsonrpc.RedirectError;
// neither the body nor the Authorization and custom headers reach that
// origin.
func TestDialRedirect(t *testing.T) {
	for _, up := range upstreams {
		for _, c := range redirecttest.Cases() {
			t.Run(up.name+"/"+c.Name(), func(t *testing.T) {
				h, u := newHostileProxy(t, up, c, "initialize")
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				conn, err := client.Dial(ctx, client.URL(u), hostileOptions(up)...)
				if err == nil {
					conn.Close()
					t.Fatal("Dial succeeded")
				}
				redirecttest.Refused(t, err, c, http.MethodPost)
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("the error shows the credential: %v", err)
				}
				h.Untouched(t)
			})
		}
	}
}

// TestCallRedirect: a tools/call redirected to another origin mid-session
// fails with a *jsonrpc.RedirectError from CallTool, once: it reaches the
// other origin not at all, the server does not run it, and it is not taken
// for an expired session (no re-initialization, not sent again). The
// session goes on.
func TestCallRedirect(t *testing.T) {
	for _, up := range upstreams {
		for _, c := range redirecttest.Cases() {
			t.Run(up.name+"/"+c.Name(), func(t *testing.T) {
				h, u := newHostileProxy(t, up, c, "tools/call")
				var reinit atomic.Int64
				opts := append(hostileOptions(up), client.OnReinitialized(func(client.Info) { reinit.Add(1) }))
				conn := dial(t, server{name: up.name, target: client.URL(u)}, opts...)
				err := echo(t, conn, "stolen?")
				redirecttest.Refused(t, err, c, http.MethodPost)
				if errors.Is(err, jsonrpc.ErrSessionExpired) {
					t.Errorf("a refused redirect reads as an expired session: %v", err)
				}
				if err := echo(t, conn, "after"); err != nil {
					t.Fatalf("the call after the refused redirect: %v", err)
				}
				st := h.stats()
				if st.ToolCalls["echo"] != 1 || st.Initializations != 1 || reinit.Load() != 0 {
					t.Errorf("echo ran %d times (want 1), %d initializations (want 1), %d re-initializations",
						st.ToolCalls["echo"], st.Initializations, reinit.Load())
				}
				if n := h.redirected.Load(); n != 2 {
					t.Errorf("%d tools/call POSTs reached the hostile origin, want 2 (one redirected, one answered)", n)
				}
				h.Untouched(t)
			})
		}
	}
}

// TestLookalikeHost: a host name that strings.ToLower folds into the one
// the host named, but that net/http looks up as another ("İbm.test", whose
// IDNA form is xn--ibm-8dc.test, for "ibm.test"), is another origin: a
// redirect of the initialize POST to it is refused, and so is an HTTP+SSE
// endpoint event that names it. Nothing reaches it, the credential and
// custom header least of all.
func TestLookalikeHost(t *testing.T) {
	lookalike := redirecttest.Case{Status: http.StatusTemporaryRedirect, Other: redirecttest.OtherLookalike}
	for _, up := range upstreams {
		t.Run(up.name+"/redirect", func(t *testing.T) {
			h, u := newHostileProxy(t, up, lookalike, "initialize")
			named := h.NamedURL(strings.TrimPrefix(u, h.URL))
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			opts := append(hostileOptions(up), client.WithHTTPClient(h.LookalikeClient()))
			conn, err := client.Dial(ctx, client.URL(named), opts...)
			if err == nil {
				conn.Close()
				t.Fatal("Dial succeeded")
			}
			redirecttest.Refused(t, err, lookalike, http.MethodPost)
			h.Untouched(t)
		})
	}
	t.Run("http+sse/endpoint", func(t *testing.T) {
		var h *redirecttest.Server
		h = redirecttest.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: endpoint\ndata: "+h.LookalikeURL("/message?sessionId=s1")+"\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		opts := append(hostileOptions(upstreams[1]), client.WithHTTPClient(h.LookalikeClient()))
		conn, err := client.Dial(ctx, client.URL(h.NamedURL("/sse")), opts...)
		if err == nil {
			conn.Close()
			t.Fatal("Dial succeeded")
		}
		var ce *legacy.CrossOriginError
		if !errors.As(err, &ce) {
			t.Fatalf("Dial = %v, want a *legacy.CrossOriginError", err)
		}
		h.Untouched(t)
	})
}

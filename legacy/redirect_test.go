package legacy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/anymcp/anymcp/httpopt"
	"github.com/anymcp/anymcp/internal/redirecttest"
)

func hostileHeaders() http.Header {
	return http.Header{"Authorization": {"Bearer s3cret"}, "X-Custom": {"private"}}
}

// hostileSSE is an HTTP+SSE server whose endpoint is on its own origin
// (so it passes the endpoint check) but which answers with c's redirect to
// another origin: every POST when redirectPOST, and the GETs from the
// getsBeforeRedirect+1-th on. A stream it serves ends after the endpoint
// event when endAfterEndpoint, or when the client goes away.
type hostileSSE struct {
	*redirecttest.Server
	gets, posts atomic.Int64
}

func newHostileSSE(t *testing.T, c redirecttest.Case, redirectPOST bool, getsBeforeRedirect int64, endAfterEndpoint bool) *hostileSSE {
	h := &hostileSSE{}
	h.Server = redirecttest.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch r.Method {
		case http.MethodGet:
			if h.gets.Add(1) > getsBeforeRedirect {
				h.Redirect(w, c, "/sse")
				return
			}
			send := startSSE(w)
			send(endpointEvent("/message?sessionId=s1"))
			if !endAfterEndpoint {
				<-r.Context().Done()
			}
		case http.MethodPost:
			h.posts.Add(1)
			if redirectPOST {
				h.Redirect(w, c, "/message?sessionId=s1")
				return
			}
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	return h
}

// TestRedirectGET: the GET of the SSE URL redirected to another origin
// fails Dial with a *jsonrpc.RedirectError; nothing reaches that origin.
func TestRedirectGET(t *testing.T) {
	for _, c := range redirecttest.Cases() {
		t.Run(c.Name(), func(t *testing.T) {
			h := newHostileSSE(t, c, false, 0, false)
			err := dialErr(t, h.URL+"/sse", Options{Common: httpopt.Common{Header: hostileHeaders()}})
			redirecttest.Refused(t, err, c, http.MethodGet)
			if strings.Count(err.Error(), "GET") != 1 {
				t.Errorf("the error names the GET more than once: %v", err)
			}
			h.Untouched(t)
		})
	}
}

// TestRedirectEndpointPOST: an endpoint on the SSE URL's origin whose POST
// is redirected to another origin: the POST fails with a
// *jsonrpc.RedirectError, once, and neither the body nor the credentials
// reach the other origin — the redirect does not get around the endpoint's
// same-origin rule.
func TestRedirectEndpointPOST(t *testing.T) {
	for _, c := range redirecttest.Cases() {
		t.Run(c.Name(), func(t *testing.T) {
			h := newHostileSSE(t, c, true, 1, false)
			tr, _ := dial(t, h.URL+"/sse", Options{Common: httpopt.Common{Header: hostileHeaders()}})
			err := sendErr(tr, request(1, "initialize"))
			redirecttest.Refused(t, err, c, http.MethodPost)
			if strings.Contains(err.Error(), "s1") {
				t.Errorf("the error shows the session id of the endpoint: %v", err)
			}
			if n := h.posts.Load(); n != 1 {
				t.Errorf("POSTed %d times, want 1", n)
			}
			h.Untouched(t)
		})
	}
}

// TestRedirectReconnect: when the stream drops and the GET that reopens it
// is redirected to another origin, the transport ends at once (the same
// GET would be redirected again) with the *jsonrpc.RedirectError, and
// nothing reaches the other origin.
func TestRedirectReconnect(t *testing.T) {
	for _, c := range redirecttest.Cases() {
		t.Run(c.Name(), func(t *testing.T) {
			h := newHostileSSE(t, c, false, 1, true)
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			tr, err := Dial(ctx, h.URL+"/sse", Options{Common: httpopt.Common{Header: hostileHeaders(), Reconnect: fast()}})
			if err != nil {
				t.Fatal(err)
			}
			feed := recvAll(t, tr)
			feed.lost(t)
			err = feed.terminal(t)
			redirecttest.Refused(t, err, c, http.MethodGet)
			if !errors.Is(err, ErrConnectionLost) {
				t.Errorf("err = %v, want ErrConnectionLost", err)
			}
			if n := h.gets.Load(); n != 2 {
				t.Errorf("%d GETs, want 2 (the stream, one refused reconnection)", n)
			}
			h.Untouched(t)
		})
	}
}

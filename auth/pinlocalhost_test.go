package auth

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// noLookups is an http.Transport that dials IP literals only: a name
// would have been looked up.
func noLookups(t *testing.T) *http.Transport {
	d := &net.Dialer{}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, _ := net.SplitHostPort(addr)
		if net.ParseIP(host) == nil {
			return nil, errors.New("a name was to be looked up: " + addr)
		}
		return d.DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// A server on ::1 only is reached as localhost too: 127.0.0.1 first, then
// ::1, the request (body and all) sent again, its Host header localhost.
func TestLocalhostPinnedToIPv6(t *testing.T) {
	var ln net.Listener
	var port int
	for range 5 { // a port free on 127.0.0.1 too
		l, err := net.Listen("tcp", "[::1]:0")
		if err != nil {
			t.Fatal(err)
		}
		port = l.Addr().(*net.TCPAddr).Port
		if v4, err := net.Listen("tcp4", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			v4.Close()
			ln = l
			break
		}
		l.Close()
	}
	if ln == nil {
		t.Fatal("no port free on both 127.0.0.1 and ::1")
	}
	type seen struct{ host, body string }
	got := make(chan seen, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- seen{r.Host, string(b)}
	}))
	srv.Listener = ln
	srv.Start()
	defer srv.Close()

	hc := pinLocalhost(&http.Client{Transport: noLookups(t)})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u := "http://LocalHost:" + strconv.Itoa(port) + "/token"
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader("grant_type=x"))
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if s := <-got; s.host != "LocalHost:"+strconv.Itoa(port) || s.body != "grant_type=x" {
		t.Fatalf("the server saw Host %q, body %q", s.host, s.body)
	}
}

// The answer to a request for localhost is the answer to that request:
// what reads resp.Request (the DPoP nonce, kept per origin) sees the URL
// the caller sent, never the address it was dialled at. The nonce kept
// under 127.0.0.1 was never found for the next proof to localhost, and
// every token request that needed one failed.
func TestLocalhostAnswerKeepsTheRequest(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("DPoP-Nonce", "n-1")
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	hc := pinLocalhost(&http.Client{Transport: noLookups(t)})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://localhost:"+port+"/token", strings.NewReader("a=b"))
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Request == nil || resp.Request.URL.Host != "localhost:"+port {
		t.Fatalf("the answer's request is for %v, want localhost:%s", resp.Request.URL, port)
	}
	k, err := newDPoPKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !k.noteNonce(resp) || k.nonce(req.URL) != "n-1" {
		t.Fatalf("the nonce of localhost's answer is not kept for localhost")
	}
}

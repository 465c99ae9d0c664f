package main

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// A token endpoint that hangs once the browser came back ends the login
// at the exchange's own limit, saying so: not at --wait, not as a browser
// that did not come back. A browser that does not come back is still
// told apart.
func TestAuthLoginTokenEndpointHangs(t *testing.T) {
	release := make(chan struct{})
	var exchanges atomic.Int32
	_, ps := protectedServer(t, oauthserver.AuthServerOptions{OnRequest: func(r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/token") {
			exchanges.Add(1)
			<-release // until the test ends
		}
	}})
	t.Cleanup(func() { close(release) }) // before the servers close
	r := desktopRunner(t)
	r.exchangeTimeout = 100 * time.Millisecond
	res := r.run("auth", "login", "--wait", "1m", ps.URL)
	if res.code != exitTimeout || !strings.Contains(res.stderr, "did not answer within 100ms") || strings.Contains(res.stderr, "browser did not come back") {
		t.Fatalf("exit %d\nstderr %s", res.code, res.stderr)
	}
	if n := exchanges.Load(); n != 1 {
		t.Fatalf("%d token requests, want 1", n)
	}

	r = newRunner(t) // nobody follows the printed URL
	res = r.run("auth", "login", "--no-browser", "--wait", "100ms", ps.URL)
	if res.code != exitTimeout || !strings.Contains(res.stderr, "the browser did not come back in time (--wait 100ms)") {
		t.Fatalf("exit %d\nstderr %s", res.code, res.stderr)
	}
}

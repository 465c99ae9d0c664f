package auth_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

func status(t *testing.T, u string) int {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// The listener is on 127.0.0.1 at a port of the system's choosing, takes
// one callback, and stops.
func TestLoopback(t *testing.T) {
	ctx := testContext(t)
	lb, err := auth.ListenLoopback(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lb.Close()
	u, _ := url.Parse(lb.RedirectURL())
	if u.Hostname() != "127.0.0.1" || u.Port() == "" || u.Port() == "0" || u.Path != auth.CallbackPath {
		t.Fatalf("redirect URL %s", u)
	}
	if got := status(t, "http://"+u.Host+"/favicon.ico"); got != http.StatusNotFound {
		t.Fatalf("another path: %d, want 404", got)
	}
	if got := status(t, lb.RedirectURL()+"?code=c1&state=s1"); got != http.StatusOK {
		t.Fatalf("callback: %d", got)
	}
	back, err := lb.Wait(ctx)
	if err != nil || !strings.HasSuffix(back, "/callback?code=c1&state=s1") || !strings.HasPrefix(back, "http://127.0.0.1:") {
		t.Fatalf("Wait = %q, %v", back, err)
	}
	lb.Close()
	if got := status(t, lb.RedirectURL()+"?code=c2"); got == http.StatusOK {
		t.Fatal("a second callback was served")
	}
}

// The listener lives no longer than its context.
func TestLoopbackContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	lb, err := auth.ListenLoopback(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lb.Close()
	waitCtx, waitCancel := context.WithCancel(context.Background())
	waitCancel()
	if _, err := lb.Wait(waitCtx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with a cancelled context: %v", err)
	}
	cancel()
	if _, err := lb.Wait(context.Background()); !errors.Is(err, auth.ErrLoopbackClosed) {
		t.Fatalf("Wait after the listener's context ended: %v", err)
	}
	if got := status(t, lb.RedirectURL()); got != 0 {
		t.Fatalf("still listening: %d", got)
	}
}

// The whole interactive flow through a loopback listener: the "browser"
// follows the authorization server's redirect to the listener.
func TestLoopbackFlow(t *testing.T) {
	f := setup(t, oauthserver.AuthServerOptions{}, oauthserver.ProtectedOptions{})
	ctx := testContext(t)
	lb, err := auth.ListenLoopback(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lb.Close()
	a, err := auth.New(auth.Config{RedirectURL: lb.RedirectURL(), Authorize: func(ctx context.Context, authURL string) (string, error) {
		go func() { // the browser: authorize, then follow the redirect home
			back, err := oauthserver.FollowAuthorization(ctx, authURL)
			if err == nil {
				if resp, err := http.Get(back); err == nil {
					resp.Body.Close()
				}
			}
		}()
		return lb.Wait(ctx)
	}})
	if err != nil {
		t.Fatal(err)
	}
	mustConnect(t, ctx, f.ps.URL, a)
	if got := f.as.Stats().LastAuthorization.Get("redirect_uri"); got != lb.RedirectURL() {
		t.Fatalf("redirect_uri %q", got)
	}
}

// The listener also takes the callback one segment below its path, where
// a client registered with an authorization server that sends no iss
// comes back (a redirect URI of that server's own); nothing deeper.
func TestLoopbackIssuerPath(t *testing.T) {
	ctx := testContext(t)
	lb, err := auth.ListenLoopback(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lb.Close()
	if got := status(t, lb.RedirectURL()+"/a/b?code=c0"); got != http.StatusNotFound {
		t.Fatalf("two segments below: %d, want 404", got)
	}
	if got := status(t, lb.RedirectURL()+"/3f2a9c?code=c1&state=s1"); got != http.StatusOK {
		t.Fatalf("callback: %d", got)
	}
	back, err := lb.Wait(ctx)
	if err != nil || !strings.HasSuffix(back, "/callback/3f2a9c?code=c1&state=s1") {
		t.Fatalf("Wait = %q, %v", back, err)
	}
}

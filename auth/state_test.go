package auth

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// A renewal whose caller gives up (its context ends while the person is
// asked) is taken over by a caller that was waiting for it, instead of
// failing that caller too.
func TestRenewalAbandonedIsTakenOver(t *testing.T) {
	as := oauthserver.StartAuthServer(oauthserver.AuthServerOptions{})
	defer as.Close()
	ps := oauthserver.StartProtected(oauthserver.ProtectedOptions{AuthServer: as})
	defer ps.Close()

	entered := make(chan struct{})
	var once sync.Once
	a, err := New(Config{RedirectURL: "http://127.0.0.1:9/callback", Authorize: func(ctx context.Context, u string) (string, error) {
		first := false
		once.Do(func() { first = true })
		if first {
			close(entered)
			<-ctx.Done() // the first person walks away
			return "", ctx.Err()
		}
		return as.Approve(ctx, u)
	}})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := a.Transport(ps.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan struct{}, 1)
	tr.s.onWait = func() { waiting <- struct{}{} }
	hc := &http.Client{Transport: tr}
	get := func(ctx context.Context) (int, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ps.URL, nil)
		resp, err := hc.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctx1, cancel1 := context.WithCancel(ctx)
	done1 := make(chan error, 1)
	go func() { _, err := get(ctx1); done1 <- err }()
	<-entered
	done2 := make(chan int, 1)
	go func() {
		st, err := get(ctx)
		if err != nil {
			t.Error(err)
		}
		done2 <- st
	}()
	<-waiting // the second caller waits for the first one's renewal
	cancel1()
	if err := <-done1; err == nil {
		t.Fatal("the abandoned request succeeded")
	}
	if st := <-done2; st == http.StatusUnauthorized || st == 0 {
		t.Fatalf("the waiting caller got %d: it did not take the renewal over", st)
	}
	if got := as.Stats().Tokens["authorization_code"]; got != 1 {
		t.Fatalf("%d code exchanges, want 1", got)
	}
}

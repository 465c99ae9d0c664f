package auth_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// A token endpoint that does not answer the code exchange, once the
// browser came back, ends the login within Config.ExchangeTimeout with an
// *ExchangeTimeoutError that says so — not at the caller's deadline, which
// waits for a person — and it matches context.DeadlineExceeded.
func TestExchangeTimeout(t *testing.T) {
	release := make(chan struct{})
	var exchanges atomic.Int32
	f := setup(t, oauthserver.AuthServerOptions{OnRequest: func(r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/token") {
			exchanges.Add(1)
			<-release // until the test ends
		}
	}}, oauthserver.ProtectedOptions{})
	t.Cleanup(func() { close(release) }) // before the servers close
	a := f.authorizer(t, auth.Config{ExchangeTimeout: 100 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // the person's wait
	defer cancel()
	_, err := a.Login(ctx, f.ps.URL)
	var xe *auth.ExchangeTimeoutError
	if !errors.As(err, &xe) || xe.Limit != 100*time.Millisecond || !errors.Is(err, context.DeadlineExceeded) ||
		!strings.Contains(err.Error(), "the browser came back, but the token endpoint "+f.as.URL+"/token did not answer within 100ms") {
		t.Fatalf("err = %v, want an *auth.ExchangeTimeoutError", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the caller's deadline passed")
	}
	if n, m := f.as.Stats().Authorizations, exchanges.Load(); n != 1 || m != 1 {
		t.Fatalf("%d authorizations, %d token requests; want 1 and 1", n, m)
	}
}

package auth_test

import (
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// A token about to expire is refreshed before it is sent: no 401.
func TestRefreshBeforeExpiry(t *testing.T) {
	f := setup(t, oauthserver.AuthServerOptions{}, oauthserver.ProtectedOptions{})
	ctx := testContext(t)
	store := &auth.MemoryStore{}
	mustConnect(t, ctx, f.ps.URL, f.authorizer(t, auth.Config{Store: store}))
	keys, _ := store.Keys(ctx)
	tok, _ := store.Token(ctx, keys[0])
	tok.Obtained, tok.Expiry = time.Now().Add(-time.Hour), time.Now().Add(10*time.Second) // within the margin of a one-hour token
	store.SaveToken(ctx, keys[0], tok)
	refusals := f.ps.Refusals()[401]

	mustConnect(t, ctx, f.ps.URL, f.authorizer(t, auth.Config{Store: store})) // a new process, the same store
	st := f.as.Stats()
	if st.Tokens["refresh_token"] != 1 || st.Authorizations != 1 {
		t.Fatalf("refreshes %d, authorizations %d; want 1 and 1", st.Tokens["refresh_token"], st.Authorizations)
	}
	if got := f.ps.Refusals()[401]; got != refusals {
		t.Fatalf("%d more 401s: the token was not refreshed before use", got-refusals)
	}
	if now, _ := store.Token(ctx, keys[0]); now.AccessToken == tok.AccessToken || now.RefreshDue(time.Now()) {
		t.Fatalf("the stored token is not the refreshed one: %v", now)
	}
}

// A 401 for a token is answered by a refresh, not a new authorization;
// rotated refresh tokens are kept (the old one is dead after use).
func TestRefreshOn401WithRotation(t *testing.T) {
	for _, rotation := range []bool{true, false} {
		f := setup(t, oauthserver.AuthServerOptions{NoRotation: !rotation}, oauthserver.ProtectedOptions{})
		ctx := testContext(t)
		a := f.authorizer(t, auth.Config{})
		mustConnect(t, ctx, f.ps.URL, a)
		for i := 1; i <= 3; i++ {
			f.as.Revoke()
			mustConnect(t, ctx, f.ps.URL, a)
			st := f.as.Stats()
			if st.Authorizations != 1 || st.Tokens["refresh_token"] != i {
				t.Fatalf("rotation %v, round %d: authorizations %d, refreshes %d", rotation, i, st.Authorizations, st.Tokens["refresh_token"])
			}
		}
	}
}

// A refused refresh token leads to a new authorization.
func TestRefreshRefused(t *testing.T) {
	f := setup(t, oauthserver.AuthServerOptions{}, oauthserver.ProtectedOptions{})
	ctx := testContext(t)
	a := f.authorizer(t, auth.Config{})
	mustConnect(t, ctx, f.ps.URL, a)
	f.as.RevokeAll()
	mustConnect(t, ctx, f.ps.URL, a)
	if st := f.as.Stats(); st.Authorizations != 2 || st.Tokens["refresh_token"] != 1 {
		t.Fatalf("authorizations %d, refreshes %d; want 2 and 1", st.Authorizations, st.Tokens["refresh_token"])
	}
}

// Concurrent callers whose token is refused share one renewal: one
// refresh, or one authorization when there is no refresh token.
func TestOneRenewalForConcurrentCallers(t *testing.T) {
	for _, noRefresh := range []bool{false, true} {
		f := setup(t, oauthserver.AuthServerOptions{NoRefresh: noRefresh}, oauthserver.ProtectedOptions{})
		ctx := testContext(t)
		c, err := client.Dial(ctx, client.URL(f.ps.URL), client.WithAuth(f.authorizer(t, auth.Config{})))
		if err != nil {
			t.Fatal(err)
		}
		f.as.Revoke()
		const n = 16
		var wg sync.WaitGroup
		errs := make(chan error, n)
		start := make(chan struct{})
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, err := c.CallTool(ctx, "echo", map[string]any{"text": "x"})
				errs <- err
			}()
		}
		close(start)
		wg.Wait()
		c.Close()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		st := f.as.Stats()
		if noRefresh && (st.Authorizations != 2 || st.Tokens["refresh_token"] != 0) ||
			!noRefresh && (st.Authorizations != 1 || st.Tokens["refresh_token"] != 1) {
			t.Fatalf("no refresh tokens %v: authorizations %d, refreshes %d", noRefresh, st.Authorizations, st.Tokens["refresh_token"])
		}
	}
}

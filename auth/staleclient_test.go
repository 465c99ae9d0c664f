package auth_test

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/internal/logtest"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// warnedRegisteredAgain reports whether logs hold the one Warn line that
// tells a person the registration was forgotten.
func warnedRegisteredAgain(logs *logtest.Buffer) bool {
	s := logs.String()
	return strings.Count(s, "level=WARN") == 1 && strings.Contains(s, "no longer knows this client's registration")
}

// An authorization server that forgot its registrations (one that keeps
// them in memory, restarted) answers the kept client id 400
// invalid_client at its authorization endpoint, and never sends the
// browser back. A login checks the kept registration there first, and
// registers again, saying so; the person is sent there once, with the
// new client.
func TestLoginAfterRegistrationsForgotten(t *testing.T) {
	f := setup(t, oauthserver.AuthServerOptions{}, oauthserver.ProtectedOptions{})
	ctx := testContext(t)
	var logs logtest.Buffer
	store := &auth.MemoryStore{}
	shown := 0
	a := f.authorizer(t, auth.Config{Store: store, Logger: slog.New(slog.NewTextHandler(&logs, nil)), Authorize: func(ctx context.Context, u string) (string, error) {
		shown++
		return f.as.Approve(ctx, u)
	}})
	mustConnect(t, ctx, f.ps.URL, a)
	old, _ := store.Client(ctx, f.as.Issuer)
	f.as.Forget()
	if _, err := a.Logout(ctx, f.ps.URL); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Login(ctx, f.ps.URL); err != nil {
		t.Fatalf("login: %v", err)
	}
	now, _ := store.Client(ctx, f.as.Issuer)
	if st := f.as.Stats(); st.Registrations != 2 || now == nil || now.ClientID == old.ClientID || shown != 2 {
		t.Fatalf("registrations %d, client %v (was %v), authorization URLs shown %d; want 2, a new one, 2", st.Registrations, now, old, shown)
	}
	if !warnedRegisteredAgain(&logs) {
		t.Fatalf("logs:\n%s", logs.String())
	}
}

// The same server refuses the kept client's refresh (invalid_client at
// its token endpoint): the registration is forgotten with the refresh
// token, and the new authorization registers again.
func TestRefreshRefusedForUnknownClient(t *testing.T) {
	f := setup(t, oauthserver.AuthServerOptions{}, oauthserver.ProtectedOptions{})
	ctx := testContext(t)
	var logs logtest.Buffer
	a := f.authorizer(t, auth.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	mustConnect(t, ctx, f.ps.URL, a)
	f.as.Forget()
	mustConnect(t, ctx, f.ps.URL, a)
	if st := f.as.Stats(); st.Registrations != 2 || st.Tokens["refresh_token"] != 1 || st.Tokens["authorization_code"] != 2 {
		t.Fatalf("registrations %d, token requests %v", st.Registrations, st.Tokens)
	}
	if !warnedRegisteredAgain(&logs) {
		t.Fatalf("logs:\n%s", logs.String())
	}
}

// An authorization response that refuses the client (error=
// unauthorized_client or invalid_client, as a server that still trusts
// the redirect URI sends it) ends the flow, and the registration is
// forgotten, saying so: the next authorization registers again.
func TestAuthorizationResponseRefusesClient(t *testing.T) {
	for _, code := range []string{"unauthorized_client", "invalid_client"} {
		t.Run(code, func(t *testing.T) {
			f := setup(t, oauthserver.AuthServerOptions{}, oauthserver.ProtectedOptions{})
			ctx := testContext(t)
			var logs logtest.Buffer
			store := &auth.MemoryStore{}
			var refuse atomic.Bool
			a := f.authorizer(t, auth.Config{Store: store, Logger: slog.New(slog.NewTextHandler(&logs, nil)), Authorize: func(ctx context.Context, u string) (string, error) {
				if !refuse.Load() {
					return f.as.Approve(ctx, u)
				}
				au, err := url.Parse(u)
				if err != nil {
					return "", err
				}
				q := au.Query()
				back := url.Values{"error": {code}, "state": {q.Get("state")}, "iss": {f.as.Issuer}}
				return q.Get("redirect_uri") + "?" + back.Encode(), nil
			}})
			mustConnect(t, ctx, f.ps.URL, a)
			refuse.Store(true)
			_, err := a.Login(ctx, f.ps.URL)
			var ge *auth.GrantError
			if !errors.As(err, &ge) || ge.Code != code {
				t.Fatalf("err = %v, want a *auth.GrantError %s", err, code)
			}
			if c, _ := store.Client(ctx, f.as.Issuer); c != nil || !warnedRegisteredAgain(&logs) {
				t.Fatalf("kept client %v; logs:\n%s", c, logs.String())
			}
			refuse.Store(false)
			if _, err := a.Login(ctx, f.ps.URL); err != nil || f.as.Stats().Registrations != 2 {
				t.Fatalf("login again: %v, registrations %d; want 2", err, f.as.Stats().Registrations)
			}
		})
	}
}

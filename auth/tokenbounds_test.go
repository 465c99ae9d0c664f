package auth_test

import (
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/internal/logtest"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// badTokens are the token suffixes a hostile authorization server adds.
var badTokens = []struct {
	name, access, refresh, reason string
}{
	{"a 1 MB access token", strings.Repeat("a", 1_000_000), "", "more than 16384"},
	{"CR LF in the access token", "\r\nX-Injected: 1", "", `"\r"`},
	{"a NUL in the access token", "\x00", "", `"\x00"`},
	{"a space in the access token", " x", "", `" "`},
	{"a non-ASCII access token", "\u00e9", "", `"\xc3"`},
	{"a 1 MB refresh token", "", strings.Repeat("r", 1_000_000), "more than 16384"},
	{"LF in the refresh token", "", "\nX", `"\n"`},
}

// longHeaders keeps the Authorization headers a server got that are
// longer than 16 KiB.
type longHeaders struct {
	mu sync.Mutex
	n  int
}

func (l *longHeaders) note(r *http.Request) {
	if len(r.Header.Get("Authorization")) > 16<<10 {
		l.mu.Lock()
		l.n++
		l.mu.Unlock()
	}
}

func (l *longHeaders) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// A token answer whose access or refresh token is longer than 16 KiB, or
// holds a byte an HTTP header cannot carry, is refused when it arrives
// (*TokenError), from the code exchange and from a refresh: it is
// neither stored nor sent.
func TestBadTokensRefusedOnArrival(t *testing.T) {
	for _, bad := range badTokens {
		for _, grant := range []string{"authorization_code", "refresh_token"} {
			t.Run(bad.name+" from "+grant, func(t *testing.T) {
				var long longHeaders
				f := setup(t, oauthserver.AuthServerOptions{TokenSuffixes: func(g string) (string, string) {
					if g == grant {
						return bad.access, bad.refresh
					}
					return "", ""
				}}, oauthserver.ProtectedOptions{OnRequest: long.note})
				ctx := testContext(t)
				a := f.authorizer(t, auth.Config{})
				var before *auth.Token
				if grant == "refresh_token" {
					mustConnect(t, ctx, f.ps.URL, a)
					before = storedToken(t, a)
					f.as.Revoke() // the next request's 401 makes a refresh
				}
				err := connect(ctx, f.ps.URL, a)
				var te *auth.TokenError
				if !errors.As(err, &te) || !strings.Contains(err.Error(), bad.reason) || errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
					t.Fatalf("err = %v, want a *auth.TokenError saying %s", err, bad.reason)
				}
				if len(err.Error()) > 1000 {
					t.Fatalf("the error is %d bytes long", len(err.Error()))
				}
				if bad.access != "" && strings.Contains(err.Error(), bad.access) {
					t.Fatal("the error shows the token")
				}
				keys, _ := a.Store().Keys(ctx)
				switch {
				case grant == "authorization_code" && len(keys) != 0:
					t.Fatalf("stored %v", keys)
				case grant == "refresh_token" && storedToken(t, a).AccessToken != before.AccessToken:
					t.Fatal("the refreshed token was stored")
				}
				if n := long.count(); n != 0 {
					t.Fatalf("%d requests carried an Authorization header over 16 KiB", n)
				}
			})
		}
	}
}

// A token the store holds that could not be sent (too long, CR LF; kept
// by an earlier version, or written by hand) is taken for no token, with
// a warning that says why, and never sent: a person who can authorizes
// again; nobody there is an *InteractionRequiredError.
func TestBadStoredTokenIgnored(t *testing.T) {
	for _, bad := range badTokens {
		for _, person := range []bool{true, false} {
			var long, crlf longHeaders
			f := setup(t, oauthserver.AuthServerOptions{}, oauthserver.ProtectedOptions{OnRequest: func(r *http.Request) {
				long.note(r)
				if strings.ContainsAny(r.Header.Get("Authorization"), "\r\n\x00") {
					crlf.note(r)
				}
			}})
			ctx := testContext(t)
			store := &auth.MemoryStore{}
			tok := &auth.Token{AccessToken: "at-stored" + bad.access, RefreshToken: "rt-stored" + bad.refresh, TokenType: "Bearer",
				Obtained: time.Now(), Expiry: time.Now().Add(time.Hour)}
			if err := store.SaveToken(ctx, auth.Key{Issuer: f.as.Issuer, Resource: f.ps.URL}, tok); err != nil {
				t.Fatal(err)
			}
			var logs logtest.Recorder
			cfg := auth.Config{Store: store, Logger: slog.New(&logs)}
			var a *auth.Authorizer
			if person {
				a = f.authorizer(t, cfg)
			} else {
				var err error
				if a, err = auth.New(cfg); err != nil {
					t.Fatal(err)
				}
			}
			err := connect(ctx, f.ps.URL, a)
			var ie *auth.InteractionRequiredError
			if person && err != nil || !person && !errors.As(err, &ie) {
				t.Fatalf("%s, a person there %v: err = %v", bad.name, person, err)
			}
			warned := false
			for _, m := range logs.Flat() {
				if m["level"] == "WARN" && strings.Contains(m["msg"], "stored token cannot be used") && strings.Contains(m["err"], bad.reason) {
					warned = true
				}
			}
			if !warned {
				t.Fatalf("%s: no warning saying why the stored token is ignored: %v", bad.name, logs.Flat())
			}
			if long.count()+crlf.count() != 0 {
				t.Fatalf("%s: the stored token was sent", bad.name)
			}
			if person && f.as.Stats().Tokens["refresh_token"] != 0 {
				t.Fatalf("%s: the stored token's refresh token was used", bad.name)
			}
		}
	}
}

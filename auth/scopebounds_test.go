package auth_test

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/internal/logtest"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// scopeServer asks, for every tools/call, for the scopes more gives it
// (the how-many-th challenge it is), and keeps the longest scope parameter
// its authorization server was asked for.
type scopeServer struct {
	*fixture
	mu      sync.Mutex
	calls   int
	longest int
}

func startScopeServer(t *testing.T, more func(n int) []string) *scopeServer {
	s := &scopeServer{}
	s.fixture = setup(t, oauthserver.AuthServerOptions{OnRequest: func(r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/authorize") {
			s.mu.Lock()
			s.longest = max(s.longest, len(r.URL.Query().Get("scope")))
			s.mu.Unlock()
		}
	}}, oauthserver.ProtectedOptions{ScopeChallenge: func(method string) []string {
		if method != "tools/call" {
			return nil
		}
		s.mu.Lock()
		s.calls++
		n := s.calls
		s.mu.Unlock()
		return more(n)
	}})
	return s
}

// scopeNames returns count scopes named prefix-1 ... prefix-count, each
// padded to width bytes.
func scopeNames(prefix string, count, width int) []string {
	out := make([]string, count)
	for i := range out {
		name := fmt.Sprintf("%s-%d", prefix, i+1)
		out[i] = name + strings.Repeat("x", max(0, width-len(name)))
	}
	return out
}

// callEcho calls the echo tool over c.
func callEcho(t *testing.T, c *client.Conn) error {
	t.Helper()
	_, err := c.CallTool(testContext(t), "echo", map[string]any{"text": "hi"})
	return err
}

// A server that answers 403 insufficient_scope asking for a huge scope
// list, larger at every call, is refused at once with a *ScopeError: no
// authorization is asked for, nothing is stored, the log says how many
// scopes and bytes, not which.
func TestHugeScopeChallengeRefused(t *testing.T) {
	s := startScopeServer(t, func(n int) []string { return scopeNames(fmt.Sprintf("c%d", n), n*(256<<10)/16, 16) })
	var logs logtest.Buffer
	a := s.authorizer(t, auth.Config{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.Level(-100)}))})
	ctx := testContext(t)
	c, err := client.Dial(ctx, client.URL(s.ps.URL), client.WithAuth(a))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 1; i <= 3; i++ {
		err := callEcho(t, c)
		var se *auth.ScopeError
		if !errors.As(err, &se) || se.Source != "challenge" || se.Count < i*(256<<10)/16 || !strings.Contains(err.Error(), "more than 64 scopes") {
			t.Fatalf("call %d: err = %v, want a *auth.ScopeError for the challenge's %d scopes", i, err, i*(256<<10)/16)
		}
	}
	if got := s.as.Stats().Authorizations; got != 1 {
		t.Fatalf("%d authorizations, want 1 (the first; none for the refused challenges)", got)
	}
	if tok := storedToken(t, a); len(tok.Scopes) != 0 {
		t.Fatalf("stored scopes %d", len(tok.Scopes))
	}
	if l := logs.String(); len(l) > 64<<10 || strings.Contains(l, "c1-1x") || !strings.Contains(l, "count=") {
		t.Fatalf("the log (%d bytes) shows the scopes, or no summary of them:\n%.2000s", len(l), l)
	}
}

// A server whose every challenge asks for a few more scopes makes the set
// grow at each step-up, up to the bound (64 scopes, 4 KiB) and no
// further: what is asked for and stored stays within it, call after call.
func TestGrowingScopesBounded(t *testing.T) {
	s := startScopeServer(t, func(n int) []string { return scopeNames(fmt.Sprintf("g%d", n), 20, 12) })
	a := s.authorizer(t, auth.Config{MaxStepUps: 3})
	ctx := testContext(t)
	c, err := client.Dial(ctx, client.URL(s.ps.URL), client.WithAuth(a))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var refused int
	for range 6 {
		var se *auth.ScopeError
		if err := callEcho(t, c); errors.As(err, &se) {
			refused++
		} else if err == nil {
			t.Fatal("a call went through")
		}
	}
	tok := storedToken(t, a)
	joined := strings.Join(tok.Scopes, " ")
	if len(tok.Scopes) > 64 || len(joined) > 4<<10 {
		t.Fatalf("stored %d scopes, %d bytes", len(tok.Scopes), len(joined))
	}
	s.mu.Lock()
	longest := s.longest
	s.mu.Unlock()
	if longest > 4<<10 {
		t.Fatalf("an authorization asked for %d bytes of scopes", longest)
	}
	if refused == 0 {
		t.Fatal("no call was refused with a *auth.ScopeError")
	}
	if got := s.as.Stats().Authorizations; got > 4 {
		t.Fatalf("%d authorizations, want at most 4 (the first, then step-ups to 60 scopes)", got)
	}
}

// A scope that is not an RFC 6749 scope-token (here a non-ASCII letter) is
// never asked for: not from a challenge, not from the Config.
func TestScopeSyntax(t *testing.T) {
	s := startScopeServer(t, func(int) []string { return []string{"read", "wr\u00e9te"} })
	a := s.authorizer(t, auth.Config{})
	ctx := testContext(t)
	c, err := client.Dial(ctx, client.URL(s.ps.URL), client.WithAuth(a))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var se *auth.ScopeError
	if err := callEcho(t, c); !errors.As(err, &se) || !strings.Contains(err.Error(), "RFC 6749") {
		t.Fatalf("err = %v, want a *auth.ScopeError", err)
	}
	if got := s.as.Stats().Authorizations; got != 1 {
		t.Fatalf("%d authorizations, want 1", got)
	}
	for _, scopes := range [][]string{{"a b"}, {"a\"b"}, scopeNames("s", 65, 1), scopeNames("s", 40, 120)} {
		var ce *auth.ConfigError
		if _, err := auth.New(auth.Config{Scopes: scopes}); !errors.As(err, &ce) {
			t.Fatalf("Scopes %.40q: err = %v, want a *auth.ConfigError", scopes, err)
		}
	}
}

package auth_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// Endpoints that the metadata of a hostile authorization server names,
// and that no request, code or secret may go to: a name under localhost
// (net/http would ask DNS where it is), a URL with user information (it
// shows one host and sends to another), one with control or formatting
// characters (they would reach the terminal that shows it). Each is
// refused before anything is sent to it, and before anyone is shown an
// authorization URL.
func TestHostileEndpointsRefused(t *testing.T) {
	for _, tt := range []struct {
		name, field string
		edit        func(endpoint string) string
	}{
		{"token endpoint under localhost", "token_endpoint", func(e string) string {
			return strings.Replace(e, "127.0.0.1", "attacker.localhost", 1)
		}},
		{"registration endpoint under localhost", "registration_endpoint", func(e string) string {
			return strings.Replace(e, "127.0.0.1", "evil.LOCALHOST", 1)
		}},
		{"authorization endpoint with userinfo", "authorization_endpoint", func(e string) string {
			return strings.Replace(e, "http://", "http://accounts.example.com%2Fsignin%3Fx=@", 1)
		}},
		{"authorization endpoint with a right-to-left override", "authorization_endpoint", func(e string) string {
			return e + "/\u202emoc.elpmaxe"
		}},
		{"authorization endpoint with a C1 CSI", "authorization_endpoint", func(e string) string {
			return e + "/\u009b2J"
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var tokenHits int
			f := setup(t, oauthserver.AuthServerOptions{
				EditMetadata: func(m map[string]any) {
					m[tt.field] = tt.edit(m[tt.field].(string))
				},
				OnRequest: func(r *http.Request) {
					if r.Method == http.MethodPost {
						mu.Lock()
						tokenHits++
						mu.Unlock()
					}
				},
			}, oauthserver.ProtectedOptions{})
			shown := 0
			a := f.authorizer(t, auth.Config{Authorize: func(ctx context.Context, u string) (string, error) {
				shown++
				return f.as.Approve(ctx, u)
			}})
			_, err := a.Login(testContext(t), f.ps.URL)
			var me *auth.MetadataError
			if !errors.As(err, &me) || !strings.Contains(err.Error(), tt.field) {
				t.Fatalf("err = %v, want a *auth.MetadataError naming %s", err, tt.field)
			}
			if strings.ContainsAny(err.Error(), "\u202e\u009b") {
				t.Fatalf("the error holds the raw character: %q", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if shown != 0 || tokenHits != 0 {
				t.Fatalf("authorization URLs shown %d, POSTs to the authorization server %d; want none", shown, tokenHits)
			}
		})
	}
}

// localhost itself is loopback, and is never looked up: the metadata's
// endpoints named http://localhost:PORT are reached at 127.0.0.1:PORT,
// with Host: localhost:PORT, whatever a resolver would say of the name.
func TestLocalhostNotLookedUp(t *testing.T) {
	f := setup(t, oauthserver.AuthServerOptions{
		EditMetadata: func(m map[string]any) {
			for _, k := range []string{"authorization_endpoint", "token_endpoint", "registration_endpoint"} {
				m[k] = strings.Replace(m[k].(string), "127.0.0.1", "localhost", 1)
			}
		},
	}, oauthserver.ProtectedOptions{})
	var mu sync.Mutex
	var dialed []string
	d := &net.Dialer{}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dialed = append(dialed, addr)
		mu.Unlock()
		host, _, _ := net.SplitHostPort(addr)
		if net.ParseIP(host) == nil {
			return nil, errors.New("test: a name was to be looked up: " + addr)
		}
		return d.DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	a := f.authorizer(t, auth.Config{HTTPClient: &http.Client{Transport: tr}, Authorize: func(ctx context.Context, u string) (string, error) {
		if !strings.HasPrefix(u, "http://localhost:") {
			t.Errorf("authorization URL %s", u)
		}
		return f.as.Approve(ctx, u)
	}})
	if _, err := a.Login(testContext(t), f.ps.URL); err != nil {
		t.Fatal(err)
	}
	st := f.as.Stats()
	if st.Registrations != 1 || st.Tokens["authorization_code"] != 1 {
		t.Fatalf("registrations %d, token requests %v", st.Registrations, st.Tokens)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, addr := range dialed {
		if strings.Contains(addr, "localhost") {
			t.Fatalf("dialed %s", addr)
		}
	}
}

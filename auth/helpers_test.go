package auth_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// redirectURL is the client's redirect URI in the tests: the headless user
// (AuthServer.Approve) reads the redirect instead of following it.
const redirectURL = "http://127.0.0.1:9/callback"

// fixture is an authorization server and a protected MCP server.
type fixture struct {
	as *oauthserver.AuthServer
	ps *oauthserver.ProtectedServer
}

// setup starts them; pso.AuthServer is set to the new authorization
// server unless pso.SameOriginAuth asks for one on the server's origin.
func setup(t *testing.T, aso oauthserver.AuthServerOptions, pso oauthserver.ProtectedOptions) *fixture {
	t.Helper()
	f := &fixture{}
	if pso.SameOriginAuth == nil {
		f.as = oauthserver.StartAuthServer(aso)
		t.Cleanup(f.as.Close)
		pso.AuthServer = f.as
	}
	f.ps = oauthserver.StartProtected(pso)
	t.Cleanup(f.ps.Close)
	if f.as == nil {
		f.as = f.ps.AuthServer()
	}
	return f
}

// authorizer returns an Authorizer with the test redirect URI and the
// headless user, unless cfg sets its own.
func (f *fixture) authorizer(t *testing.T, cfg auth.Config) *auth.Authorizer {
	t.Helper()
	if cfg.RedirectURL == "" {
		cfg.RedirectURL = redirectURL
	}
	if cfg.Authorize == nil {
		cfg.Authorize = f.as.Approve
	}
	a, err := auth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// connect dials url with a, lists the tools and closes.
func connect(ctx context.Context, url string, a *auth.Authorizer, opts ...client.Option) error {
	c, err := client.Dial(ctx, client.URL(url), append([]client.Option{client.WithAuth(a)}, opts...)...)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.AllTools(ctx)
	return err
}

// mustConnect is connect that fails the test.
func mustConnect(t *testing.T, ctx context.Context, url string, a *auth.Authorizer, opts ...client.Option) {
	t.Helper()
	if err := connect(ctx, url, a, opts...); err != nil {
		t.Fatal(err)
	}
}

// recorder notes the requests a server gets, as "METHOD path".
type recorder struct {
	mu   sync.Mutex
	seen []string
	hdrs []http.Header
}

func (r *recorder) note(req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, req.Method+" "+req.URL.Path)
	r.hdrs = append(r.hdrs, req.Header.Clone())
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen...)
}

func (r *recorder) headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.hdrs...)
}

package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"sync"

	"golang.org/x/oauth2"

	"github.com/anymcp/anymcp/internal/origin"
)

// Authorizer obtains, keeps and renews tokens for MCP servers, as its
// Config says. One Authorizer serves any number of servers and
// connections; it is safe for concurrent use.
type Authorizer struct {
	cfg   Config
	store Store
	log   *slog.Logger

	dpopOnce sync.Once
	dpopKey  *dpopKey // see key; nil with Config.NoDPoP

	mu      sync.Mutex
	servers map[string]*serverState // by server URL
}

// New returns an Authorizer, or a *ConfigError when cfg cannot work.
func New(cfg Config) (*Authorizer, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	a := &Authorizer{cfg: cfg, store: cfg.Store, log: cfg.Logger, servers: map[string]*serverState{}}
	if a.store == nil {
		a.store = &MemoryStore{}
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if cfg.DPoPKey != nil {
		if _, err := newDPoPKey(cfg.DPoPKey); err != nil {
			return nil, &ConfigError{err.Error()}
		}
	}
	return a, nil
}

// key returns the DPoP key, made or loaded on first use: Config.DPoPKey,
// else the Store's when it is a KeyStore, else a new one. Nil with
// Config.NoDPoP, or when the Store could not give one (logged): no DPoP.
func (a *Authorizer) key(ctx context.Context) *dpopKey {
	a.dpopOnce.Do(func() {
		if a.cfg.NoDPoP {
			return
		}
		key := a.cfg.DPoPKey
		if ks, ok := a.store.(KeyStore); ok && key == nil {
			var err error
			if key, err = ks.DPoPKey(ctx); err != nil {
				a.log.WarnContext(ctx, "no DPoP key from the store; DPoP-bound tokens cannot be used", "err", err)
				return
			}
		}
		k, err := newDPoPKey(key)
		if err != nil {
			a.log.WarnContext(ctx, "making the DPoP key; DPoP-bound tokens cannot be used", "err", err)
			return
		}
		a.dpopKey = k
	})
	return a.dpopKey
}

// Store returns where the Authorizer keeps tokens and registrations.
func (a *Authorizer) Store() Store { return a.store }

// Transport returns the RoundTripper that authorizes the requests to the
// MCP server at serverURL and sends them through base (nil means
// http.DefaultTransport). Requests to any other origin pass through
// untouched, without a token. Transports for the same server share their
// tokens and their renewals.
func (a *Authorizer) Transport(serverURL string, base http.RoundTripper) (*Transport, error) {
	if base == nil {
		base = http.DefaultTransport
	}
	s, err := a.state(serverURL, base)
	if err != nil {
		return nil, err
	}
	return &Transport{s: s, base: base}, nil
}

// Login authorizes the client for the server at serverURL now, whether or
// not a token is stored: discovery, registration and the grant (with
// Config.Authorize for the authorization code flow). It probes the server
// with a GET first, to read its challenge; a server that does not answer
// 401 is looked up at its well-known metadata locations.
func (a *Authorizer) Login(ctx context.Context, serverURL string) (*Token, error) {
	s, err := a.state(serverURL, nil)
	if err != nil {
		return nil, err
	}
	ch, refused := a.probe(ctx, s)
	s.mu.Lock()
	gen := s.gen
	s.mu.Unlock()
	_, err = s.renew(ctx, gen, renewal{challenge: ch, force: true, refused: refused})
	if errors.Is(err, errNotOAuth) {
		return nil, &MetadataError{URL: s.shown, Reason: "the server publishes no OAuth metadata, and did not ask for a Bearer token: there is nothing to log in to"}
	}
	if err != nil {
		return nil, err
	}
	tok, _ := s.snapshot()
	return tok, nil
}

// probe GETs the server without a token, for its challenge; refused says
// whether it answered 401.
func (a *Authorizer) probe(ctx context.Context, s *serverState) (ch *Challenge, refused bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.raw, nil)
	if err != nil {
		return nil, false
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := s.hc.Do(req)
	if err != nil {
		a.log.DebugContext(ctx, "OAuth probe failed; using the well-known locations", "server", s.shown, "err", origin.RedactError(err))
		return nil, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		return nil, false
	}
	drain(resp.Body)
	return s.challenge(resp.Header), true
}

// Entry is a stored token and what it is for.
type Entry struct {
	Key   Key
	Token *Token
}

// Tokens lists the stored tokens for the server at serverURL (tokens whose
// resource is the server or a parent of it), or every stored token when
// serverURL is "".
func (a *Authorizer) Tokens(ctx context.Context, serverURL string) ([]Entry, error) {
	var u *url.URL
	if serverURL != "" {
		var err error
		if u, err = parseServerURL(serverURL); err != nil {
			return nil, err
		}
	}
	keys, err := a.store.Keys(ctx)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, k := range keys {
		if u != nil && !resourceCovers(k.Resource, u) {
			continue
		}
		t, err := a.store.Token(ctx, k)
		if err != nil {
			return nil, err
		}
		if t != nil {
			out = append(out, Entry{Key: k, Token: t})
		}
	}
	return out, nil
}

// Logout forgets the tokens stored for the server at serverURL and
// returns their keys. Registrations are kept (they belong to the
// authorization server, not to the server): ForgetRegistrations forgets
// them.
func (a *Authorizer) Logout(ctx context.Context, serverURL string) ([]Key, error) {
	entries, err := a.Tokens(ctx, serverURL)
	if err != nil {
		return nil, err
	}
	var keys []Key
	for _, e := range entries {
		if err := a.store.DeleteToken(ctx, e.Key); err != nil {
			return keys, err
		}
		keys = append(keys, e.Key)
	}
	a.mu.Lock()
	s := a.servers[serverURL]
	a.mu.Unlock()
	if s != nil {
		s.mu.Lock()
		s.token, s.loaded = nil, true
		s.gen++
		s.mu.Unlock()
	}
	return keys, nil
}

// ForgetRegistrations forgets the dynamic client registrations kept for
// the authorization servers of the server at serverURL — those that
// issued its kept tokens, and the one its metadata names now (looked up
// as Login does, for 10 seconds at most; a server that cannot be reached
// in that time adds none) — and returns
// their issuers. The next authorization registers again. Call it before
// Logout, which forgets the tokens it learns issuers from. Registrations
// serve every server of their authorization server: the tokens of those
// others stay, but cannot be refreshed without the registration.
func (a *Authorizer) ForgetRegistrations(ctx context.Context, serverURL string) ([]string, error) {
	entries, err := a.Tokens(ctx, serverURL)
	if err != nil {
		return nil, err
	}
	var issuers []string
	add := func(is string) {
		if !slices.Contains(issuers, is) {
			issuers = append(issuers, is)
		}
	}
	for _, e := range entries {
		add(e.Key.Issuer)
	}
	s, err := a.state(serverURL, nil)
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, probeTimeout) // a server that hangs adds none
	defer cancel()
	ch, refused := a.probe(dctx, s)
	if d, err := a.discover(dctx, s, ch, nil, ch != nil || refused); err == nil {
		add(d.server.Issuer)
	} else {
		a.log.DebugContext(ctx, "no authorization server found for the server; forgetting only the registrations of its kept tokens' issuers", "server", s.shown, "err", err)
	}
	var forgot []string
	for _, is := range issuers {
		c, err := a.store.Client(ctx, is)
		if err != nil {
			return forgot, err
		}
		if c == nil || c.Registration != RegistrationDynamic {
			continue
		}
		if err := a.store.DeleteClient(ctx, is); err != nil {
			return forgot, err
		}
		forgot = append(forgot, is)
	}
	return forgot, nil
}

func parseServerURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &ConfigError{fmt.Sprintf("server URL %q is not an http(s) URL", origin.RedactString(raw))}
	}
	return u, nil
}

// state returns the shared state of a server, made on first use.
func (a *Authorizer) state(serverURL string, base http.RoundTripper) (*serverState, error) {
	u, err := parseServerURL(serverURL)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if s := a.servers[serverURL]; s != nil {
		return s, nil
	}
	hc := a.cfg.HTTPClient
	if hc == nil {
		if base == nil {
			base = http.DefaultTransport
		}
		hc = &http.Client{Transport: base}
	}
	s := &serverState{a: a, url: u, raw: serverURL, shown: origin.Redact(u), hc: origin.Guard(pinLocalhost(hc))}
	a.servers[serverURL] = s
	return s, nil
}

// oauthContext makes oauth2 send its token requests with the discovery's
// (redirect-guarded) HTTP client, each request's credentials noted in sent
// (see sentValues), and its DPoP proof added when d's tokens are
// DPoP-bound.
func (a *Authorizer) oauthContext(ctx context.Context, d *discovery, sent *sentValues) context.Context {
	hc := withSentHidden(d.hc, sent)
	if d.dpop {
		hc.Transport = &dpopTransport{key: a.key(ctx), base: hc.Transport}
	}
	return context.WithValue(ctx, oauth2.HTTPClient, hc)
}

package auth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// serverState is what an Authorizer knows of one MCP server: its current
// token and the renewal in flight. Every Transport for the server shares
// it, so that one refresh or one authorization serves all their callers.
type serverState struct {
	a     *Authorizer
	url   *url.URL
	raw   string       // as the host gave it: requests go there, and it keys Authorizer.servers
	shown string       // as errors and logs show it: origin.Redact of url
	hc    *http.Client // metadata, registration, tokens: redirect-guarded

	mu     sync.Mutex
	loaded bool   // the store was consulted for a token
	token  *Token // what requests carry; nil for none
	key    Key    // what token is keyed by
	gen    uint64 // counts token changes: tells a caller whether its token is still current
	disc   *discovery
	flight *flight

	notOAuth  atomic.Bool // a 401 without a Bearer challenge, and no OAuth metadata: not OAuth
	wantsDPoP atomic.Bool // the server sent a DPoP challenge

	onWait func() // tests: called when a caller starts waiting for a renewal
}

// flight is a renewal under way; its callers wait on done.
type flight struct {
	done chan struct{}
	err  error
}

func (s *serverState) snapshot() (*Token, uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token, s.gen
}

func (s *serverState) lastDiscovery() *discovery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.disc
}

// current returns the token to send, and its generation. The first call
// looks in the store for a token whose resource is this server (the most
// recent, if several issuers gave one). A token about to expire is
// refreshed first, once for all callers; when that fails and it has
// expired, no token is sent (the server's 401 starts a renewal).
func (s *serverState) current(ctx context.Context) (*Token, uint64) {
	s.mu.Lock()
	if !s.loaded {
		s.loaded = true
		if k, t := s.find(ctx); t != nil {
			s.token, s.key = t, k
			s.gen++
			if t.JKT != "" {
				s.wantsDPoP.Store(true) // its refresh needs a proof too
			}
		}
	}
	tok, gen := s.token, s.gen
	s.mu.Unlock()
	if tok == nil || !tok.RefreshDue(time.Now()) {
		return tok, gen
	}
	if tok.RefreshToken != "" {
		if _, err := s.renew(ctx, gen, renewal{proactive: true}); err != nil {
			s.a.log.InfoContext(ctx, "refreshing the OAuth token before expiry failed", "server", s.shown, "err", err)
		}
		tok, gen = s.snapshot()
	}
	if tok != nil && tok.Expired(time.Now()) {
		return nil, gen
	}
	return tok, gen
}

// find looks for a stored token for this server.
func (s *serverState) find(ctx context.Context) (Key, *Token) {
	keys, err := s.a.store.Keys(ctx)
	if err != nil {
		s.a.log.WarnContext(ctx, "reading the OAuth token store", "err", err)
		return Key{}, nil
	}
	var best *Token
	var bestKey Key
	for _, k := range keys {
		if !resourceCovers(k.Resource, s.url) {
			continue
		}
		t, err := s.a.store.Token(ctx, k)
		if err != nil || t == nil || !s.a.usable(ctx, t) {
			continue
		}
		if err := t.check("store"); err != nil {
			s.a.log.WarnContext(ctx, "a stored token cannot be used; ignored", "server", s.shown, "issuer", k.Issuer, "err", err)
			continue
		}
		if best == nil || t.Obtained.After(best.Obtained) {
			best, bestKey = t, k
		}
	}
	return bestKey, best
}

// renew renews the token a caller sent with generation gen, for the reason
// r. Callers that come while a renewal is under way wait for it and share
// its outcome (renewedElsewhere, or its error); a caller whose token was
// already replaced returns at once. A renewal abandoned because its
// caller's context ended is taken over by a waiting caller.
func (s *serverState) renew(ctx context.Context, gen uint64, r renewal) (outcome, error) {
	for {
		s.mu.Lock()
		if s.gen != gen {
			s.mu.Unlock()
			return renewedElsewhere, nil
		}
		if f := s.flight; f != nil {
			s.mu.Unlock()
			if s.onWait != nil {
				s.onWait()
			}
			select {
			case <-f.done:
			case <-ctx.Done():
				return 0, ctx.Err()
			}
			if f.err != nil && !isContextError(f.err) {
				return 0, f.err
			}
			continue // done (the generation moved on), or abandoned: look again
		}
		f := &flight{done: make(chan struct{})}
		s.flight = f
		prev, prevKey := s.token, s.key
		s.mu.Unlock()

		out, tok, d, err := s.a.obtain(ctx, s, r, prev, prevKey)

		s.mu.Lock()
		switch {
		case err == nil && tok != nil:
			s.token, s.key, s.disc = tok, d.key(), d
			s.gen++
		case err == nil && d != nil:
			s.disc = d
			if prev != nil && r.proactive {
				// The refresh token was refused and dropped: keep
				// the access token, without trying again.
				t := *prev
				t.RefreshToken = ""
				s.token = &t
				s.gen++
			}
		}
		s.flight = nil
		s.mu.Unlock()
		f.err = err
		close(f.done)
		return out, err
	}
}

func isContextError(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

package auth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/anymcp/anymcp/internal/origin"
)

// Transport is the http.RoundTripper of one MCP server (see
// Authorizer.Transport). It adds the server's bearer token to every
// request for the server's origin, and answers the server's challenges:
//
//   - 401: the token is renewed — a token stored meanwhile, a refresh, or a
//     new grant — and the request sent again; a second 401 after a new
//     grant is returned as it is.
//   - 403 with error="insufficient_scope": a new grant for the scopes asked
//     before plus the challenged ones, and the request sent again; at most
//     Config.MaxStepUps times per request, and not again for scopes this
//     request was already granted.
//
// A request is sent again only if its body can be replayed (GetBody, as
// http.NewRequest sets for in-memory bodies); otherwise the renewal is made
// for the next request and the answer returned. Failures of the
// authorization itself are returned as errors (an
// *InteractionRequiredError, a *MetadataError, a *GrantError, ...), which
// http.Client wraps in a *url.Error: use errors.As.
type Transport struct {
	s    *serverState
	base http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	s := t.s
	if !origin.Same(req.URL, s.url) {
		return t.base.RoundTrip(req) // never a token to another origin
	}
	ctx := req.Context()
	replay := req.GetBody
	if replay == nil && (req.Body == nil || req.Body == http.NoBody) {
		replay = func() (io.ReadCloser, error) { return http.NoBody, nil }
	}
	var header http.Header
	if v := req.Header.Values("Mcp-Protocol-Version"); len(v) > 0 {
		header = http.Header{"Mcp-Protocol-Version": v}
	}
	maxStepUps := s.a.cfg.maxStepUps()
	var grantedHere, refreshedHere, nonceHere bool
	stepUps := 0
	var next io.ReadCloser // the body of the next attempt, taken once the last was refused
	for attempt := 0; ; attempt++ {
		tok, gen := s.current(ctx)
		out := req.Clone(ctx)
		if attempt > 0 {
			out.Body = next
		}
		if tok != nil {
			if err := s.a.present(out, tok); err != nil {
				return nil, err
			}
		}
		resp, err := t.base.RoundTrip(out)
		if err != nil || attempt >= 4+maxStepUps {
			return resp, err
		}
		if tok != nil && tok.JKT != "" && s.a.key(ctx).noteNonce(resp) && resp.StatusCode == http.StatusUnauthorized &&
			!nonceHere && replay != nil && asksNonce(resp.Header) {
			// The server wants its nonce in the proof (RFC 9449
			// section 9): once more, with it.
			nonceHere = true
			drain(resp.Body)
			resp.Body.Close()
			if next, err = replay(); err != nil {
				return nil, err
			}
			continue
		}
		var r renewal
		switch {
		case resp.StatusCode == http.StatusUnauthorized:
			if grantedHere {
				return resp, nil // a token just granted is refused: the server's answer stands
			}
			ch := s.challenge(resp.Header)
			if ch == nil && s.notOAuth.Load() {
				return resp, nil
			}
			r = renewal{challenge: ch, header: header, noRefresh: refreshedHere}
		case resp.StatusCode == http.StatusForbidden:
			ch := s.challenge(resp.Header)
			if ch == nil || ch.Param(paramError) != "insufficient_scope" || tok == nil || stepUps >= maxStepUps {
				return resp, nil
			}
			if grantedHere && subset(ch.scopes(), tok.Scopes) {
				return resp, nil // granted these scopes for this very request, and still refused
			}
			stepUps++
			r = renewal{challenge: ch, header: header, stepUp: true}
		default:
			return resp, nil
		}
		if replay == nil {
			// The body is gone: renew for the next request, and let
			// this one's answer stand.
			if _, err := s.renewFor(ctx, gen, r); errors.Is(err, errNotOAuth) {
				s.notOAuth.Store(true)
			} else if err != nil {
				s.a.log.InfoContext(ctx, "renewing the OAuth token after a refusal", "server", s.shown, "err", err)
			}
			return resp, nil
		}
		// Keep the refusal's start: it is the answer if the server turns
		// out not to speak OAuth.
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxRefusalBody))
		resp.Body.Close()
		// The next attempt's body is taken now, before the renewal: a
		// body that tells whether its request was sent (the transports'
		// POSTs) then says, should the renewal fail, that the request
		// still to be sent was not — the one sent was refused.
		if next, err = replay(); err != nil {
			return nil, err
		}
		done, err := s.renewFor(ctx, gen, r)
		if errors.Is(err, errNotOAuth) {
			s.notOAuth.Store(true)
			resp.Body = io.NopCloser(bytes.NewReader(body))
			return resp, nil
		}
		if err != nil {
			next.Close()
			return nil, &RefusedError{Status: resp.StatusCode, Err: err}
		}
		switch done {
		case granted:
			grantedHere = true
		case refreshed:
			refreshedHere = true
		}
	}
}

// present adds t to req: a Bearer token, or a DPoP token with a fresh proof
// for req.
func (a *Authorizer) present(req *http.Request, t *Token) error {
	ctx := req.Context()
	if r := checkTokenValue("access token", t.AccessToken, true); r != "" {
		return &TokenError{Source: "store", Reason: r} // never sent
	}
	if t.JKT == "" {
		req.Header.Set("Authorization", "Bearer "+t.AccessToken)
		return nil
	}
	if !a.usable(ctx, t) {
		return errors.New("the token is bound to a DPoP key this Authorizer does not hold")
	}
	p, err := a.key(ctx).proof(req.Method, req.URL, t.AccessToken, time.Now())
	if err != nil {
		return fmt.Errorf("signing the DPoP proof: %w", err)
	}
	req.Header.Set("Authorization", tokenTypeDPoP+" "+t.AccessToken)
	req.Header.Set(headerDPoP, p)
	return nil
}

// maxRefusalBody bounds what is kept of a 401's body.
const maxRefusalBody = 64 << 10

// subset reports whether every scope of a is in b.
func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// renewFor is renew for a request of the host's that waits, whose context
// is ctx: the renewal's own requests end when ctx does, but carry none of
// its values. An httptrace of the transport's in ctx would otherwise take
// them for attempts of the host's request (wire.Delivery would call a
// refused request sent, because a metadata GET was written).
func (s *serverState) renewFor(ctx context.Context, gen uint64, r renewal) (outcome, error) {
	own, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	if d, ok := ctx.Deadline(); ok {
		var stop context.CancelFunc
		own, stop = context.WithDeadline(own, d)
		defer stop()
	}
	defer context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })()
	return s.renew(own, gen, r)
}

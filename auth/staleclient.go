package auth

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/anymcp/anymcp/internal/origin"
)

// An authorization server that keeps its registrations in memory (the
// TypeScript SDK's OAuth demo) forgets them when it restarts: the client
// id kept in the Store is then unknown to it. Its authorization endpoint
// answers such a client 400 invalid_client, and does not send the
// browser back (it cannot trust the redirect URI of a client it does not
// know), so a login with it waits for a browser that never returns. A
// kept registration is therefore tried first, and one that the server
// refuses anywhere (invalid_client or unauthorized_client from its
// authorization endpoint, its token endpoint or in the authorization
// response) is forgotten, for a new one.

// probeTimeout bounds the check of a kept registration.
const probeTimeout = 10 * time.Second

// staleClient is authorizationCode's error for a kept registration that
// the authorization endpoint refused before anyone was asked.
type staleClient struct{ why string }

func (e *staleClient) Error() string {
	return "the authorization server refused the registered client: " + e.why
}

// clientRefused GETs the authorization URL of a kept registration, as the
// browser will, without following a redirect, and returns why the client
// is refused: the OAuth error code when the answer is a 400 or 401 that
// names invalid_client or unauthorized_client; "" otherwise (a login page,
// a redirect, no answer: the flow goes on).
func (a *Authorizer) clientRefused(ctx context.Context, d *discovery, authURL string) string {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return ""
	}
	hc := *d.hc
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := hc.Do(req)
	if err != nil {
		a.log.DebugContext(ctx, "checking the kept registration at the authorization endpoint", "issuer", d.server.Issuer, "err", origin.RedactError(err))
		return ""
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest && resp.StatusCode != http.StatusUnauthorized {
		drain(resp.Body)
		return ""
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<10))
	for _, code := range []string{"invalid_client", "unauthorized_client"} {
		if bytes.Contains(body, []byte(code)) {
			return "its authorization endpoint answers " + strconv.Itoa(resp.StatusCode) + " " + code
		}
	}
	return ""
}

// refusedClient says why err shows that the authorization server does not
// know the client: an OAuth invalid_client or unauthorized_client; "" for
// any other error.
func refusedClient(err error) string {
	var ge *GrantError
	if !errors.As(err, &ge) || (ge.Code != "invalid_client" && ge.Code != "unauthorized_client") {
		return ""
	}
	return "its " + ge.Step + " answer is " + ge.Code
}

// forgetClient forgets the kept registration c, when it is still the one
// kept, and says so at Warn (a person should learn why the client is
// registered anew): why the server refused it, and what happens next.
func (a *Authorizer) forgetClient(ctx context.Context, c *ClientInfo, why, next string) {
	kept, err := a.store.Client(ctx, c.Issuer)
	if err != nil || kept == nil || kept.ClientID != c.ClientID || kept.Registration != RegistrationDynamic {
		return
	}
	if err := a.store.DeleteClient(ctx, c.Issuer); err != nil {
		a.log.WarnContext(ctx, "forgetting a refused registration", "issuer", c.Issuer, "err", err)
		return
	}
	a.log.WarnContext(ctx, "the authorization server no longer knows this client's registration ("+why+"): it is forgotten; "+next, "issuer", c.Issuer, "client", c.ClientID)
}

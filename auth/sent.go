package auth

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"golang.org/x/oauth2"
)

// sentValues notes every credential the requests of one grant carried —
// the code and its verifier, a client secret or assertion, a refresh
// token, an assertion or subject token, a DPoP proof — as noteSent saw
// them leave, so that what the server answers is shown without them: a
// server may quote the request back in error_description, error_uri or any
// other field. It is safe for concurrent use.
type sentValues struct {
	mu     sync.Mutex
	values []string
}

// add notes v, as it is and in the encodings a quote of it may take: the
// form encoding it was sent in, and JSON's escapes.
func (s *sentValues) add(v string) {
	if v == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, form := range []string{v, url.QueryEscape(v), jsonEscaped(v)} {
		if form != "" && !slices.Contains(s.values, form) {
			s.values = append(s.values, form)
		}
	}
}

// list returns the values noted, longest first, so that a shorter one
// never cuts a longer one apart.
func (s *sentValues) list() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	out := slices.Clone(s.values)
	s.mu.Unlock()
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// jsonEscaped is v as encoding/json writes it between quotes.
func jsonEscaped(v string) string {
	b, err := json.Marshal(v)
	if err != nil || len(b) < 2 {
		return ""
	}
	return string(b[1 : len(b)-1])
}

// maxNotedBody bounds what noteSent reads of a request body: a token
// request's form is a few kilobytes.
const maxNotedBody = 1 << 20

// noteSent is the RoundTripper under a grant's token requests: it notes
// the credentials each request carries (its Authorization and DPoP
// headers, and the secretFields of its form) before sending it.
type noteSent struct {
	sent *sentValues
	base http.RoundTripper
}

func (n noteSent) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := n.sent.noteRequest(req); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	return n.base.RoundTrip(req)
}

// noteRequest notes the credentials of req. A body it cannot read again
// (no GetBody) is refused: what it carries could not be hidden.
func (s *sentValues) noteRequest(req *http.Request) error {
	if v := req.Header.Get(headerDPoP); v != "" {
		s.add(v)
	}
	if authz := req.Header.Get("Authorization"); authz != "" {
		scheme, cred, _ := strings.Cut(authz, " ")
		s.add(cred)
		if strings.EqualFold(scheme, "Basic") {
			if raw, err := base64.StdEncoding.DecodeString(cred); err == nil {
				if _, secret, ok := strings.Cut(string(raw), ":"); ok {
					s.add(secret)
					if u, err := url.QueryUnescape(secret); err == nil {
						s.add(u)
					}
				}
			}
		}
	}
	if req.Body == nil || req.Body == http.NoBody {
		return nil
	}
	if req.GetBody == nil {
		return errors.New("a token request whose body cannot be read again")
	}
	body, err := req.GetBody()
	if err != nil {
		return err
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, maxNotedBody+1))
	if err != nil {
		return err
	}
	if len(b) > maxNotedBody {
		return errors.New("a token request body larger than 1 MiB")
	}
	form, err := url.ParseQuery(string(bytes.TrimSpace(b)))
	if err != nil {
		return nil // not a form: the token requests are forms
	}
	for _, f := range secretFields {
		for _, v := range form[f] {
			s.add(v)
		}
	}
	return nil
}

// withSentHidden returns c with its Transport under noteSent.
func withSentHidden(c *http.Client, sent *sentValues) *http.Client {
	out := *c
	base := out.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	out.Transport = noteSent{sent: sent, base: base}
	return &out
}

// hideSent returns err with the values sent hidden from every field of the
// *GrantError in it that shows what the server said (its code, description
// and URI). Other errors are returned as they are.
func hideSent(err error, sent []string) error {
	var ge *GrantError
	if err == nil || len(sent) == 0 || !errors.As(err, &ge) {
		return err
	}
	ge.Code = hideValues(ge.Code, sent)
	ge.Description = hideValues(ge.Description, sent)
	ge.URI = hideValues(ge.URI, sent)
	return err
}

// tokenCall runs the token request of one grant: do, given the context
// that makes oauth2 send it through noteSent (and again once for a DPoP
// nonce), then finish, which makes the answer a *Token. Whatever error it
// returns shows none of the credentials the requests carried: this is the
// one place where a token endpoint's answer becomes an error, knowing what
// was sent.
func (a *Authorizer) tokenCall(ctx context.Context, d *discovery, step string, do func(ctx context.Context) (*oauth2.Token, error), finish func(*oauth2.Token) (*Token, error)) (*Token, error) {
	sent := &sentValues{}
	octx := a.oauthContext(ctx, d, sent)
	ot, err := a.withNonce(d, func() (*oauth2.Token, error) { return do(octx) })
	if err != nil {
		return nil, hideSent(grantError(step, err, sent.list()...), sent.list())
	}
	t, err := finish(ot)
	return t, hideSent(err, sent.list())
}

package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/anymcp/anymcp/internal/origin"
)

// InteractionRequiredError says that a person has to authorize the client
// (an authorization code flow) and none can: Config.Authorize is nil, as in
// a script or a CI job. Log in first where a person can (mcpcall auth
// login), then run again: the stored tokens are used and refreshed. Its
// text names no Go field: a command-line tool may show it as it is, or
// say instead what its user can do.
type InteractionRequiredError struct {
	Server string // the MCP server's URL, as origin.Redact shows it
	Issuer string // the authorization server, when discovery got that far
}

func (e *InteractionRequiredError) Error() string {
	s := e.Server + " needs a person to authorize this client"
	if e.Issuer != "" {
		s += " at " + e.Issuer
	}
	return s + ", and this program has no way to ask one"
}

// RefusedError is the error of a request the server refused (401, or 403
// for scopes) when no credentials to send it again could be had: Status
// is the server's answer, Err why there were none (typically an
// *InteractionRequiredError or a *GrantError). Its text is Err's: the
// status is for whoever reports the exchange (HTTPStatus).
type RefusedError struct {
	Status int
	Err    error
}

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// HTTPStatus is the status the server answered the request with.
func (e *RefusedError) HTTPStatus() int { return e.Status }

// MetadataError says that discovery failed or found metadata that must not
// be used: none at any location, a resource that is not the server, an
// issuer that is not the one asked for, no S256 PKCE support, a URL that is
// not https.
type MetadataError struct {
	URL    string // the document, or the server whose metadata was sought
	Reason string
	Err    error // the cause, when there is one
}

func (e *MetadataError) Error() string {
	s := "OAuth metadata: " + e.Reason
	if e.URL != "" {
		s = "OAuth metadata at " + e.URL + ": " + e.Reason
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *MetadataError) Unwrap() error { return e.Err }

// IssuerMismatchError says that an authorization response's iss parameter
// (RFC 9207) is not the issuer the request went to, or is missing although
// the authorization server said it sends it. The response, error fields
// included, was not acted on: it may come from another server (a mix-up
// attack).
type IssuerMismatchError struct {
	Expected string
	Got      string // "" when the parameter was missing
}

func (e *IssuerMismatchError) Error() string {
	if e.Got == "" {
		return fmt.Sprintf("the authorization response has no iss, but %s says it sends one (RFC 9207): response ignored", e.Expected)
	}
	return fmt.Sprintf("the authorization response comes from issuer %q, not %q (RFC 9207): response ignored", e.Got, e.Expected)
}

// StateMismatchError says that the authorization response did not carry the
// state value of the request it answers: it is not the answer to this
// client's request, and was ignored.
type StateMismatchError struct{}

func (e *StateMismatchError) Error() string {
	return "the authorization response does not carry this request's state: response ignored"
}

// GrantError says that the authorization server refused: the authorization
// request (the person declined, an invalid scope), a token request (an
// invalid or expired code, refresh token or assertion, bad client
// credentials), or a registration; or that an identity provider refused an
// IDJAG token exchange (Step "token exchange").
type GrantError struct {
	Step        string // "authorization", "token", "refresh", "client_credentials", "jwt-bearer", "token exchange" or "registration"
	Status      int    // the HTTP status, 0 for an authorization response
	Code        string // the OAuth error code, e.g. access_denied, invalid_grant
	Description string
	URI         string
}

func (e *GrantError) Error() string {
	var b strings.Builder
	who := "the authorization server"
	if e.Step == stepTokenExchange {
		who = "the identity provider"
	}
	b.WriteString(who + " refused the " + e.Step)
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Code != "" {
		b.WriteString(": " + e.Code)
	}
	if e.Description != "" {
		b.WriteString(": " + e.Description)
	}
	return b.String()
}

// AssertionError says that Config.Assertion could not give an assertion
// for the authorization server Issuer: Err says why (for IDJAG, the
// identity provider's *GrantError when it refused the exchange).
type AssertionError struct {
	Issuer string
	Err    error
}

func (e *AssertionError) Error() string {
	return "no assertion for the jwt-bearer grant at " + e.Issuer + ": " + e.Err.Error()
}

func (e *AssertionError) Unwrap() error { return e.Err }

// grantError converts an error of golang.org/x/oauth2 into a *GrantError
// when the server answered with an OAuth error. What the request sent that
// must not be shown (an assertion, an ID token) is taken out of what the
// server says, before any of it is cut short: a server may quote it.
func grantError(step string, err error, sent ...string) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		ge := &GrantError{Step: step, Code: re.ErrorCode, Description: hideValues(re.ErrorDescription, sent), URI: hideValues(re.ErrorURI, sent)}
		if re.Response != nil {
			ge.Status = re.Response.StatusCode
		}
		if ge.Code == "" && len(re.Body) > 0 {
			ge.Description = excerpt([]byte(hideValues(string(re.Body), sent)))
		}
		return ge
	}
	// The token request got no answer (net/http's error names the token
	// endpoint's URL), or one oauth2 could not use.
	return fmt.Errorf("%s request: %w", step, oauth2Error{origin.RedactError(err)})
}

// oauth2Error shows an error of golang.org/x/oauth2 without the package
// name its messages start with ("oauth2: server response missing
// access_token"); it unwraps to the error itself.
type oauth2Error struct{ err error }

func (e oauth2Error) Error() string { return strings.TrimPrefix(e.err.Error(), "oauth2: ") }

func (e oauth2Error) Unwrap() error { return e.err }

// errNotOAuth: a 401 without a Bearer challenge from a server that
// publishes no OAuth metadata is not an OAuth challenge (an API key
// server's, say): the Transport returns it as it is.
var errNotOAuth = &MetadataError{Reason: "the server's 401 asks for no Bearer token, and it publishes no OAuth metadata"}

// ConfigError says that the Config cannot work as given, e.g. a
// ClientMetadataURL that is not https, a client_credentials grant without
// a client id.
type ConfigError struct{ Reason string }

func (e *ConfigError) Error() string { return "OAuth configuration: " + e.Reason }

// secretFields are the members of an OAuth answer or request whose values
// are credentials.
var secretFields = []string{
	"access_token", "refresh_token", "id_token", "client_secret", "registration_access_token",
	"code", "code_verifier", "assertion", "client_assertion", "device_code",
	"subject_token", "actor_token",
}

// hideValues returns s with every occurrence of the values (an
// assertion, an ID token) replaced by "…".
func hideValues(s string, values []string) string {
	for _, v := range values {
		if v != "" {
			s = strings.ReplaceAll(s, v, "…")
		}
	}
	return s
}

// withoutSecrets returns b with the values of its secretFields replaced by
// "…", when b is a JSON object or a form that has any; b otherwise. A
// server that answers with an unexpected status, or leaves out what was
// expected, may still send a secret (a registration's client_secret): its
// answer is shown in errors without it.
func withoutSecrets(b []byte) []byte {
	var obj map[string]json.RawMessage
	if json.Unmarshal(b, &obj) == nil {
		hid := false
		for _, f := range secretFields {
			if _, ok := obj[f]; ok {
				obj[f], hid = json.RawMessage(`"…"`), true
			}
		}
		if !hid {
			return b
		}
		out, err := json.Marshal(obj)
		if err != nil {
			return nil
		}
		return out
	}
	q, err := url.ParseQuery(strings.TrimSpace(string(b)))
	if err != nil {
		return b
	}
	hid := false
	for _, f := range secretFields {
		if q.Has(f) {
			q.Set(f, "…")
			hid = true
		}
	}
	if !hid {
		return b
	}
	return []byte(strings.ReplaceAll(q.Encode(), url.QueryEscape("…"), "…"))
}

// excerpt returns the start of a body, for an error message, without the
// values of the credentials it may hold (withoutSecrets).
func excerpt(b []byte) string {
	const max = 200
	s := strings.TrimSpace(string(withoutSecrets(b)))
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// ExchangeTimeoutError says that the browser came back with a code, but
// the token endpoint did not answer its exchange within Limit
// (Config.ExchangeTimeout): the person did authorize, and logging in again
// may work once the authorization server answers.
type ExchangeTimeoutError struct {
	Endpoint string // the token endpoint, as origin.Redact shows it
	Limit    time.Duration
}

func (e *ExchangeTimeoutError) Error() string {
	return fmt.Sprintf("the browser came back, but the token endpoint %s did not answer within %s", e.Endpoint, e.Limit)
}

// Unwrap makes the error match context.DeadlineExceeded: it is a timeout.
func (e *ExchangeTimeoutError) Unwrap() error { return context.DeadlineExceeded }

// errExchangeTimeout is the cause of the code exchange's own deadline.
var errExchangeTimeout = errors.New("the code exchange's time ran out")

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/internal/origin"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/stdio"
)

// Exit codes. They are part of the interface: scripts test them.
const (
	exitOK        = 0
	exitToolError = 1 // the tool answered isError: true
	exitUsage     = 2 // bad command line, unknown server name, unreadable --args
	exitAuth      = 3 // 401/403
	exitConnect   = 4 // connection, transport or negotiation failure
	exitRPC       = 5 // JSON-RPC error from the server (unknown tool, invalid params, ...)
	exitTimeout   = 6
	exitInterrupt = 130
)

// exitCodesHelp is the table printed by --help and kept in docs/mcpcall.md.
const exitCodesHelp = `Exit status:
  0    ok
  1    the tool answered isError: true
  2    usage error (flags, arguments, unknown server name)
  3    authentication or authorization refused (HTTP 401/403)
  4    connection, transport or negotiation failure
  5    JSON-RPC error from the server (unknown tool, invalid params, ...),
       an answer that does not decode, or a task that ended without its
       result (the request ran)
  6    timeout (--timeout, --max-time, --connect-timeout)
  130  interrupted (Ctrl-C); the request in flight is cancelled: the server
       is sent notifications/cancelled, except a 2026-07-28 server over
       HTTP, which sees the request's stream closed (that revision's way)`

// Error kinds, as the "kind" of a --json error line.
const (
	kindToolError   = "tool_error"
	kindUsage       = "usage"
	kindAuth        = "auth"
	kindConnect     = "connection"
	kindRPC         = "rpc"
	kindTimeout     = "timeout"
	kindInterrupted = "interrupted"
)

// exitError carries an exit code (and a kind for --json) out of a command.
type exitError struct {
	code int
	kind string
	err  error
	rpc  int64 // a JSON-RPC code that goes with it, if any
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usageErr(format string, a ...any) error {
	return &exitError{code: exitUsage, kind: kindUsage, err: fmt.Errorf(format, a...)}
}

// invalidParamsErr is a failure found before sending that the server would
// have answered with -32602: an unknown tool, arguments against the schema.
func invalidParamsErr(format string, a ...any) error {
	return &exitError{code: exitRPC, kind: kindRPC, rpc: jsonrpc.CodeInvalidParams, err: fmt.Errorf(format, a...)}
}

// connectError marks a failure that happened while connecting (before the
// handshake finished), so that it counts as a connection failure even when
// the server answered with a JSON-RPC error.
type connectError struct{ err error }

func (e *connectError) Error() string { return e.err.Error() }
func (e *connectError) Unwrap() error { return e.err }

// Causes set on contexts, so that a deadline says which limit ran out.
var (
	errMaxTime        = errors.New("--max-time ran out")
	errConnectTimeout = errors.New("--connect-timeout ran out")
)

// failure is an error sorted out for the exit code and the --json line.
type failure struct {
	code      int
	kind      string
	message   string
	status    int    // HTTP status, 0 when none
	rpcCode   int64  // JSON-RPC code, 0 when none
	url       string // where it happened, when known
	transport string
	login     string // the mcpcall auth login line to run, when a login is needed
	logout    string // the mcpcall auth logout line to run, when a kept token got a 5xx
	task      string // the task a call became that may still run, when known
	dropped   bool   // the server closed the connection on the stateless probe
}

// classify decides the exit code of err. interrupted says the caller's
// context (Ctrl-C) was cancelled.
func classify(err error, interrupted bool) failure {
	f := failure{message: err.Error(), dropped: errors.Is(err, negotiate.ErrProbeDropped)}
	var ee *exitError
	var httpErr *jsonrpc.HTTPError
	var rpcErr *jsonrpc.Error
	var connErr *connectError
	var netErr net.Error
	var refused *auth.RefusedError
	switch {
	case errors.As(err, &httpErr):
		f.status = httpErr.StatusCode
		f.url = httpErr.URL
	case errors.As(err, &refused): // the server's 401, which the authorizer could not answer
		f.status = refused.Status
	}
	if errors.As(err, &rpcErr) {
		f.rpcCode = rpcErr.Code
	}
	var taskErr *client.TaskError
	if errors.As(err, &taskErr) {
		f.task = taskErr.TaskID
	}
	switch {
	case errors.As(err, &ee):
		f.code, f.kind = ee.code, ee.kind
		if ee.rpc != 0 {
			f.rpcCode = ee.rpc
		}
	case interrupted:
		f.code, f.kind = exitInterrupt, kindInterrupted
	case errors.Is(err, client.ErrTimeout), errors.Is(err, errMaxTime), errors.Is(err, errConnectTimeout),
		errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		f.code, f.kind = exitTimeout, kindTimeout
	case httpErr != nil && (httpErr.StatusCode == 401 || httpErr.StatusCode == 403), isAuthError(err):
		f.code, f.kind = exitAuth, kindAuth
	case errors.As(err, &connErr), errors.Is(err, jsonrpc.ErrSessionExpired),
		taskErr == nil && rpcErr != nil && rpcErr.Outcome() == jsonrpc.OutcomeUnknown:
		// (a session that kept expiring is the transport's failure,
		// even when the 404 carried a JSON-RPC error; so is an answer
		// a bridge says it lost, as a direct lost answer is)
		f.code, f.kind = exitConnect, kindConnect
	case rpcErr != nil, taskErr != nil, errors.As(err, new(*client.ResultError)), errors.As(err, new(*client.InputError)):
		// a JSON-RPC error, also one an HTTP error body carried, once
		// connected; a task that ended without its result (the server
		// cancelled or forgot it); an answer that does not decode; input
		// the server asked for that mcpcall could not give
		// (--sampling-cmd failed): the request reached the server, and
		// trying again would run it again
		f.code, f.kind = exitRPC, kindRPC
	default:
		f.code, f.kind = exitConnect, kindConnect
	}
	var login *auth.InteractionRequiredError
	if errors.As(err, &login) {
		// The library's text says that this program cannot ask a
		// person; mcpcall says what its user can do (the hint names
		// the login to run).
		f.message = loginNeeded(login, f.status)
	}
	return f
}

// isAuthError reports whether err is an authorization failure of package
// auth: discovery, registration, a refused grant, a login needed, scopes
// or a token past their bounds.
func isAuthError(err error) bool {
	return errors.As(err, new(*auth.InteractionRequiredError)) || errors.As(err, new(*auth.MetadataError)) ||
		errors.As(err, new(*auth.GrantError)) || errors.As(err, new(*auth.IssuerMismatchError)) ||
		errors.As(err, new(*auth.StateMismatchError)) || errors.As(err, new(*auth.ScopeError)) ||
		errors.As(err, new(*auth.TokenError))
}

// loginNeeded is the message of a run that needs the user to log in: it
// never starts a login (only mcpcall auth login does).
func loginNeeded(e *auth.InteractionRequiredError, status int) string {
	s := e.Server + " needs you to log in"
	var why []string
	if status != 0 {
		why = append(why, fmt.Sprintf("it answered %d", status))
	}
	if e.Issuer != "" {
		why = append(why, "authorization server "+e.Issuer)
	}
	if len(why) > 0 {
		s += " (" + strings.Join(why, "; ") + ")"
	}
	return s + ", and only mcpcall auth login starts a login"
}

// withoutStderrTail is msg, the text of err, without the stderr tail of
// a stdio server's *stdio.ExitError in err: mcpcall has shown that
// stderr already, line by line as it came, and shows it once.
func withoutStderrTail(err error, msg string) string {
	var ee *stdio.ExitError
	if !errors.As(err, &ee) || strings.TrimSpace(ee.Stderr) == "" {
		return msg
	}
	short := *ee
	short.Stderr = ""
	return strings.Replace(msg, ee.Error(), short.Error()+" (its stderr is shown above)", 1)
}

// hint adds advice for a person to a failure, when there is some.
func (f failure) hint() string {
	switch {
	case f.login != "":
		return "log in first, where a browser can be opened or a URL followed: " + f.login
	case f.logout != "":
		// Said as far as it is known: a server may fail for any reason,
		// and one that lost its state may answer 500 to a token it forgot.
		return fmt.Sprintf("the server answered %d to a request with a stored token; if this persists, run %s (then log in again)", f.status, f.logout)
	case f.code == exitAuth:
		return "the server wants credentials: log in with mcpcall auth login TARGET, or pass a token with --bearer-env VAR"
	case f.dropped:
		return "the server closed the connection on the stateless probe: --era initialize connects with initialize alone, without the probe"
	case f.code == exitConnect && strings.Contains(f.message, "connection refused"):
		return "nothing is listening there: is the server running, and is the URL right?"
	case f.task != "" && (f.code == exitInterrupt || f.code == exitTimeout):
		return "the task " + shown(f.task) + " may still run: mcpcall tasks result " + taskWord(f.task) + " TARGET waits for it again"
	case f.rpcCode == jsonrpc.CodeMissingClientCapability:
		return "the server needs a capability of the client: --root DIR declares roots (elicitation and sampling are always declared)"
	}
	return ""
}

// errorLine is the one JSON line --json mode writes to stderr on failure.
type errorLine struct {
	Error errorBody `json:"error"`
}

type errorBody struct {
	Kind      string  `json:"kind"`
	Message   string  `json:"message"`
	Status    *int    `json:"status"`
	Code      *int64  `json:"code"`
	URL       *string `json:"url"`
	Transport string  `json:"transport,omitempty"` // the transport in use, or tried last; left out when none was
	Login     string  `json:"login,omitempty"`     // the mcpcall auth login line to run
	Logout    string  `json:"logout,omitempty"`    // the mcpcall auth logout line to run, if a kept token's request keeps failing
}

// report writes f to w: one JSON line in --json mode, else a sentence.
func (f failure) report(w io.Writer, asJSON bool) {
	if asJSON {
		b := errorBody{Kind: f.kind, Message: f.message, Login: f.login, Logout: f.logout, Transport: f.transport}
		if f.status != 0 {
			b.Status = &f.status
		}
		if f.rpcCode != 0 {
			b.Code = &f.rpcCode
		}
		if f.url != "" {
			u := origin.RedactString(f.url)
			b.URL = &u
		}
		line, err := json.Marshal(errorLine{b})
		if err != nil { // cannot happen: only strings and numbers
			line = []byte(`{"error":{"kind":"internal","message":"cannot encode the error"}}`)
		}
		fmt.Fprintf(w, "%s\n", line)
		return
	}
	fmt.Fprintln(w, "mcpcall:", f.message)
	if h := f.hint(); h != "" {
		fmt.Fprintln(w, "hint:", h)
	}
}

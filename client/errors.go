package client

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/negotiate"
)

// ErrClosed is returned by calls on a Conn the host has closed. It also
// matches jsonrpc.ErrClosed, the error of a transport closed by its
// owner, so that one errors.Is test finds any close the host made; a
// fleet's fleet.ErrClosed matches both.
var ErrClosed error = connClosed{}

// connClosed is ErrClosed: its own text, and errors.Is matches
// jsonrpc.ErrClosed too.
type connClosed struct{}

func (connClosed) Error() string { return "anymcp: connection closed" }

// Is matches jsonrpc.ErrClosed.
func (connClosed) Is(target error) bool { return target == jsonrpc.ErrClosed }

// ErrListingTooLarge ends a listing that follows cursors (Tools, AllTools,
// RawTools and their kind) past 10,000 pages, or whose pages together
// passed 256 MiB of results: a server cannot make the client list
// without bound.
var ErrListingTooLarge = errors.New("anymcp: listing too large")

// ErrTimeout is matched by every TimeoutError.
var ErrTimeout = errors.New("anymcp: request timed out")

// TimeoutError says a call ran out of time: no answer within the request
// timeout (reset by progress), or past the maximum total time. When the
// request may have reached the server (MayHaveRun), the server was sent
// notifications/cancelled and the error matches jsonrpc.ErrOutcomeUnknown.
type TimeoutError struct {
	Method     string
	After      time.Duration
	Total      bool // the maximum total time ran out, not the idle timeout
	MayHaveRun bool // the request may have reached the server
}

func (e *TimeoutError) Error() string {
	kind := "no answer"
	if e.Total {
		kind = "maximum call time"
	}
	return fmt.Sprintf("%s: %s after %v", e.Method, kind, e.After)
}

// Is matches ErrTimeout, and jsonrpc.ErrOutcomeUnknown when MayHaveRun.
func (e *TimeoutError) Is(target error) bool {
	return target == ErrTimeout || (e.MayHaveRun && target == jsonrpc.ErrOutcomeUnknown)
}

// VersionError is returned by Dial and Open when the server answered
// initialize with a revision this client does not speak, or (Pinned) not
// the one WithProtocolVersion pinned.
type VersionError struct {
	Offered string // what the client asked for
	Got     string // what the server answered
	Pinned  bool   // the host allowed only Offered
}

func (e *VersionError) Error() string {
	if e.Pinned {
		return fmt.Sprintf("anymcp: server answered protocol version %q to our %q, the only one this Conn may speak (WithProtocolVersion)", e.Got, e.Offered)
	}
	return fmt.Sprintf("anymcp: server answered protocol version %q to our %q; this client speaks %s", e.Got, e.Offered, strings.Join(negotiate.ClientVersions(), ", "))
}

// LostError is the error of a call that was in flight when the transport
// broke: the request was sent, its answer never came, so it may have run.
// A call whose sending the break itself cut gets the transport's error
// instead; it matches jsonrpc.ErrOutcomeUnknown all the same.
// Unwrap gives the transport's error (for stdio, an *stdio.ExitError with
// the exit status and the stderr tail).
type LostError struct {
	Method string
	Err    error
}

func (e *LostError) Error() string {
	return e.Method + ": connection lost before the answer (the request may have run): " + e.Err.Error()
}

func (e *LostError) Unwrap() error { return e.Err }

// Is matches jsonrpc.ErrOutcomeUnknown.
func (e *LostError) Is(target error) bool { return target == jsonrpc.ErrOutcomeUnknown }

// named is err as the error of a request or notification named method:
// prefixed with the method, unless err names it already — the HTTP
// transports label the message they failed to send ("Streamable HTTP: tools/list
// (id 3): ..."), and a server may quote it ("Method not found:
// bogus/method") — so that no error names its method twice.
func named(method string, err error) error {
	if namesMethod(err.Error(), method) {
		return err
	}
	return fmt.Errorf("%s: %w", method, err)
}

// namesMethod reports whether msg holds method as a whole word (not as
// part of a longer name: "mapping" does not name "ping").
func namesMethod(msg, method string) bool {
	for i := 0; i+len(method) <= len(msg); {
		j := strings.Index(msg[i:], method)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(method)
		if (j == 0 || !isNameByte(msg[j-1])) && (end == len(msg) || !isNameByte(msg[end])) {
			return true
		}
		i = j + 1
	}
	return false
}

// isNameByte reports whether b may be part of a method name.
func isNameByte(b byte) bool {
	return b == '/' || b == '_' || b == '-' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}

// SubscriptionRefusedError is the error of Subscribe when a 2026-07-28
// server acknowledged the subscriptions/listen stream without the URI: it
// will not send that resource's updates (it may not know the resource, or
// not let this client watch it). The Conn does not ask for it again.
type SubscriptionRefusedError struct {
	URI string
}

func (e *SubscriptionRefusedError) Error() string {
	return "anymcp: the server does not send updates of " + e.URI + " (its subscriptions/listen acknowledgement leaves it out)"
}

// HandshakeError is the error of a Dial whose negotiation chose a
// transport and an era, and whose handshake on them then failed (the
// server refused initialize with a JSON-RPC error, answered a revision
// this client does not speak, or failed notifications/initialized). Its
// text is Err's; Transport and Era say what was in use, Report how the
// negotiation went.
type HandshakeError struct {
	Transport string // TransportStdio, negotiate.StreamableHTTP, negotiate.SSE, or the host's name
	Era       string // "stateless" or "initialize"
	Report    *negotiate.Report
	Err       error
}

func (e *HandshakeError) Error() string { return e.Err.Error() }
func (e *HandshakeError) Unwrap() error { return e.Err }

// ResultError is the error of a call the server answered with a result
// that is not JSON, or does not decode into the caller's type (a field of
// the wrong type, say): the request reached the server and ran; only its
// answer is unusable. It is not a reason to send the request again.
type ResultError struct {
	Method string
	Err    error // the decoder's
}

func (e *ResultError) Error() string { return e.Method + ": decoding result: " + e.Err.Error() }
func (e *ResultError) Unwrap() error { return e.Err }

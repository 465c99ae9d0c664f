package jsonrpc

import (
	"context"
	"errors"
	"strconv"
	"strings"
)

// Transport carries JSON-RPC messages to and from one MCP server. The
// modern (Streamable HTTP), legacy (HTTP+SSE) and stdio packages implement
// it; a host may plug in its own with client.Open. In short:
//
//   - Send may be called concurrently. It returns once msg is handed to the
//     server or, where a request opens its own exchange (an HTTP POST), once
//     every message of that exchange is queued for Recv. A request whose
//     Send failed gets no response.
//   - One goroutine calls Recv in a loop, concurrently with Send. The
//     message is the caller's from then on. Recv may be called again after
//     a *SessionLostError or a *GapError; ErrClosed ends it.
//   - What waits for Recv is bounded. A transport whose session is gone
//     refuses all but initialize (ErrSessionExpired, ErrNotSent). Close is
//     idempotent and returns once the transport's goroutines are gone.
//
// The contract in full: docs/transports.md.
type Transport interface {
	Send(ctx context.Context, msg *Message) error
	Recv() (*Message, error)
	Close() error
}

// Shutdowner is a Transport whose Close waits on the peer — a process's
// grace period after its stdin closes, a session's DELETE — and can be
// hurried: Shutdown(ctx) does what Close does, but once ctx is done it
// stops waiting (the process group is killed, the DELETE abandoned) and
// returns as soon as its goroutines and processes are gone. Close is
// Shutdown without a bound beyond the transport's own.
type Shutdowner interface {
	Shutdown(ctx context.Context) error
}

// Shutdown closes t bounded by ctx: with its Shutdown method when it is a
// Shutdowner, else with Close (which ctx then cannot shorten).
func Shutdown(ctx context.Context, t Transport) error {
	if s, ok := t.(Shutdowner); ok {
		return s.Shutdown(ctx)
	}
	return t.Close()
}

// StreamOpener is a Transport with a stream of server messages outside
// answers that it opens only when asked (Streamable HTTP's standalone GET
// stream, with modern.Options.StreamOnDemand). The protocol layer asks
// once the host listens for what comes there.
type StreamOpener interface {
	OpenStream()
}

// OpenStream asks t for its stream of server messages, when t is a
// StreamOpener; other transports have theirs open already, or none.
func OpenStream(t Transport) {
	if o, ok := t.(StreamOpener); ok {
		o.OpenStream()
	}
}

// AnswerTaker is a Transport that can hand a response straight to the
// protocol layer, on the goroutine that read it, instead of queueing it
// for Recv: that saves the caller a wait for the Recv loop. The transport
// offers a response this way only when nothing the server sent before it
// (progress, a log) can be overtaken: when it is the first message of its
// request's own exchange (an HTTP POST), or, on a stream all messages
// share (stdio, the HTTP+SSE stream), when Recv waits with every earlier
// message received, so that the Recv loop has handled them all. take
// returns false for a response it does not want (no call waits for that
// id), and the transport then queues it for Recv as before. take must not
// block.
type AnswerTaker interface {
	TakeAnswers(take func(*Message) bool)
}

// TakeAnswers gives t the function that takes responses, when t is an
// AnswerTaker; other transports deliver every message through Recv.
func TakeAnswers(t Transport, take func(*Message) bool) {
	if a, ok := t.(AnswerTaker); ok {
		a.TakeAnswers(take)
	}
}

// RecvInterrupter is a Transport whose Recv can be woken without closing
// it: InterruptRecv makes the Recv waiting now, or the next one that would
// wait, return ErrInterrupted, once; a Recv that returns a message first
// uses the wake-up up. It lets one reader hand a transport to another
// without leaving a goroutine behind, blocked in Recv until the server
// next says something.
type RecvInterrupter interface {
	InterruptRecv()
}

// InterruptRecv wakes t's waiting Recv, when t is a RecvInterrupter; a
// Recv of any other transport waits on for its next message.
func InterruptRecv(t Transport) {
	if i, ok := t.(RecvInterrupter); ok {
		i.InterruptRecv()
	}
}

// Conditions transports report and the protocol layer acts on. Transports
// wrap these, so test with errors.Is.
var (
	// ErrClosed: the transport was closed by its owner.
	ErrClosed = errors.New("transport closed")
	// ErrSessionExpired: the server no longer knows the session (HTTP 404
	// on a request that carried Mcp-Session-Id). The request was not run.
	ErrSessionExpired = errors.New("session expired")
	// ErrNotSent: the transport refused the message without sending it,
	// because its session is gone and no new one is initialized yet. It
	// comes with ErrSessionExpired; unlike a server's 404, it says nothing
	// of the server, only that a re-initialization is due or under way.
	ErrNotSent = errors.New("not sent")
	// ErrOutcomeUnknown: the request was sent but its answer was lost, so
	// it may or may not have run on the server.
	ErrOutcomeUnknown = errors.New("outcome unknown: the request may have run")
	// ErrInterrupted: Recv was woken by InterruptRecv, with no message; the
	// transport goes on, and Recv may be called again.
	ErrInterrupted = errors.New("receive interrupted")
)

// SessionLostError is what Recv returns when the transport's session ended
// while the transport itself goes on: the next session needs initialize.
// It matches ErrSessionExpired.
type SessionLostError struct {
	Cause error // why the session ended
	// AnswersFollow says that requests already sent still get their answer
	// (or their error) through their own exchange, as with Streamable HTTP,
	// where each POST carries its own answer: the protocol layer must not
	// give them up. When false (HTTP+SSE, stdio), answers of requests sent
	// before could only have come over what was lost: their outcome is
	// unknown.
	AnswersFollow bool
	// Unanswered, when UnansweredKnown, lists exactly the requests written
	// over what was lost that got no answer: their outcome is unknown, and
	// every other request in flight went elsewhere (a supervised stdio
	// server's next process) and may still be answered. Without
	// UnansweredKnown the transport cannot tell.
	Unanswered      []ID
	UnansweredKnown bool
}

func (e *SessionLostError) Error() string {
	return "session lost (initialize needed): " + e.Cause.Error()
}

// Unwrap returns the cause.
func (e *SessionLostError) Unwrap() error { return e.Cause }

// Is matches ErrSessionExpired.
func (e *SessionLostError) Is(target error) bool { return target == ErrSessionExpired }

// GapError is what Recv returns when the stream that brings the server's
// own messages (Streamable HTTP's GET stream) broke and opened again
// without resuming, its events having no ids: whatever the server sent
// while none was open is lost — a list_changed notification, a resource
// update. The session goes on, and so does the transport.
type GapError struct {
	Reason string // why the stream had ended
}

func (e *GapError) Error() string {
	return "messages from the server may be lost: the stream that brings them opened again without resuming (it had ended: " + e.Reason + ")"
}

// HTTPError is an HTTP exchange that ended in a status the transport
// could not use.
type HTTPError struct {
	Method     string // HTTP method
	URL        string
	StatusCode int
	Body       string // the start of the body, bounded
	RPCError   *Error // the JSON-RPC error the body carried, if any
}

func (e *HTTPError) Error() string {
	s := e.Method + " " + e.URL + " → " + strconv.Itoa(e.StatusCode)
	if e.RPCError != nil {
		return s + " (" + e.RPCError.Error() + ")"
	}
	if e.Body != "" {
		return s + ": " + e.Body
	}
	return s
}

// Unwrap returns the JSON-RPC error from the body, when there is one.
func (e *HTTPError) Unwrap() error {
	if e.RPCError == nil {
		return nil
	}
	return e.RPCError
}

// RedirectError is an HTTP redirect the library refused to follow. The
// request that was redirected reached only the server that answered with
// the redirect; nothing at all was sent to the Location it named. The
// library follows a redirect only within the origin (scheme, host and
// port) of the URL the host gave, without changing the method, and only a
// few times in a row.
type RedirectError struct {
	Method string // the method of the request that was redirected
	Status int    // the redirect status: 301, 302, 303, 307 or 308
	// From is the URL that answered with the redirect and To the URL its
	// Location named, user information and query values redacted.
	From, To string
	Reason   RedirectReason
	// Limit is the number of redirects followed before a RedirectTooMany.
	Limit int
}

// RedirectReason says why a redirect was refused.
type RedirectReason int

const (
	// RedirectCrossOrigin: the Location is on another origin than the URL
	// the host gave (another scheme, host name or port).
	RedirectCrossOrigin RedirectReason = iota + 1
	// RedirectMethodChange: following the redirect (a 301, 302 or 303)
	// would turn a POST, or another method with a body, into a GET.
	RedirectMethodChange
	// RedirectTooMany: one redirect too many in a row.
	RedirectTooMany
)

// Error reads like "POST http://127.0.0.1:8080/mcp → 307 to
// http://localhost:9090/mcp: refused: another origin (http://localhost:9090,
// not http://127.0.0.1:8080); nothing was sent there".
func (e *RedirectError) Error() string {
	s := e.Method + " " + e.From + " → " + strconv.Itoa(e.Status) + " to " + e.To + ": refused: "
	switch e.Reason {
	case RedirectCrossOrigin:
		return s + "another origin (" + originOf(e.To) + ", not " + originOf(e.From) + "); nothing was sent there"
	case RedirectMethodChange:
		return s + "following it would turn the " + e.Method + " into a GET and drop its body"
	case RedirectTooMany:
		return s + "more than " + strconv.Itoa(e.Limit) + " redirects in a row"
	}
	return s + "redirect policy"
}

// originOf returns the scheme://host[:port] part of a URL as written.
func originOf(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return scheme + "://" + rest
}

package client

import (
	"context"
	"encoding/json"
	"time"

	"github.com/anymcp/anymcp/mcp"
)

// Observer sees every request a Conn sends, and the Conn's life. It is the
// seam for tracing and metrics (the otel module's observer is one). It keeps
// the core free of any telemetry library. Set it with WithObserver. A Conn
// without one pays nothing for the seam. Its methods are called concurrently,
// from the calls' goroutines: they must be quick and safe for concurrent use.
//
// Every request goes through it: the typed methods, Call, server/discover,
// ping, and subscriptions/listen (one request per stream opened). So do task
// polls, each under the context of the call that became the task. So do a
// re-initialization's requests, and each request of Dial's and Open's
// negotiation: the stateless probe and initialize, over each transport tried.
// An answer served from the result cache makes no request and is not seen.
type Observer interface {
	// Request is called as a request starts, before it goes out. It returns
	// the context the request runs under (the requests it leads to — a
	// task's polls, a listing the Conn needs first — start from it) and the
	// RequestObserver that follows it, or nil not to follow it.
	Request(ctx context.Context, r *Request) (context.Context, RequestObserver)
	// Opened is called once the Conn is ready, with what was negotiated.
	Opened(ctx context.Context, c *ConnEvent)
	// Closed is called once, when a Conn that was opened ends.
	Closed(c *ConnEvent)
}

// RequestObserver follows one request, from Request to End.
type RequestObserver interface {
	// Meta returns members for the request's params._meta (trace context:
	// traceparent, tracestate, baggage), put there on every attempt, or
	// nil. A key the Conn sets itself (progressToken, the
	// io.modelcontextprotocol/ ones) is left out.
	Meta() map[string]string
	// Event tells what happened on the way: each attempt sent, retry,
	// resend, re-initialization, input round, task created and polled.
	Event(e *Event)
	// End is called once, with how the request ended.
	End(o *Outcome)
}

// Request describes a request to an Observer. It must not be kept past
// the call of Request.
type Request struct {
	Method string
	// Name is what the request is about: the tool's name (tools/call), the
	// prompt's (prompts/get), the resource's URI (resources/read,
	// resources/subscribe, resources/unsubscribe); else "".
	Name string
	// TaskID is the task a tasks/* request is about; else "".
	TaskID string
	// Params are the params as the host gave them, without the _meta the
	// Conn adds (for the host that opts in to recording tool arguments);
	// they must not be changed.
	Params any

	Era             mcp.Era
	Transport       string // as Info names it
	ProtocolVersion string
	SessionID       string // the Mcp-Session-Id in use, where there is one
	Server          Endpoint
}

// Endpoint is where a server listens: host and port of the URL dialled;
// zero for a command or a custom transport.
type Endpoint struct {
	Address string
	Port    int
}

// ConnEvent describes a Conn opened or closed, to an Observer.
type ConnEvent struct {
	Info   Info
	Server Endpoint
	// Lived is how long the Conn was open (Closed only).
	Lived time.Duration
	// Err is why the Conn ended (Closed only): ErrClosed when the host
	// closed it, else what broke it.
	Err error
}

// EventKind says what an Event tells.
type EventKind int

// What an Event tells.
const (
	// EventSent: an attempt of the request went out with JSON-RPC id ID.
	EventSent EventKind = iota + 1
	// EventRetry: the transport sent the same HTTP request again after a
	// 429, a 503 or a refused connection (Status, 0 for the latter),
	// having waited Wait.
	EventRetry
	// EventResend: the Conn sends the request again as a new request (a
	// new id), because of Err: its answer was lost and it is safe to
	// repeat, or the server refused it before it ran.
	EventResend
	// EventReinitialize: the session the request went out on expired
	// (Err); the Conn re-initializes and then sends it again.
	EventReinitialize
	// EventInputRequired: the server asked for input (round Round); the
	// request is sent again with the answers.
	EventInputRequired
	// EventTaskCreated: the server made a task (TaskID) of the request;
	// the Conn waits for it, polling with requests of their own.
	EventTaskCreated
	// EventTaskPolled: a poll (tasks/get, a request of its own) found the
	// task TaskID in status TaskStatus.
	EventTaskPolled
)

// Event is something that happened to a request on its way.
type Event struct {
	Kind   EventKind
	ID     int64         // EventSent
	Status int           // EventRetry
	Wait   time.Duration // EventRetry
	Round  int           // EventInputRequired
	TaskID string        // EventTaskCreated, EventTaskPolled
	Err    error         // EventResend, EventReinitialize
	// TaskStatus is the status a poll found (EventTaskPolled).
	TaskStatus string
}

// Outcome is how a request ended: with a result (Err nil), a result that
// says isError (a tool's failure, IsError), or an error — a JSON-RPC error
// (*jsonrpc.Error), a timeout (*TimeoutError), a transport's failure, or a
// lost answer (errors.Is(err, jsonrpc.ErrOutcomeUnknown)).
type Outcome struct {
	// Result is the result as the server sent it; it must not be kept past
	// End or changed.
	Result   json.RawMessage
	IsError  bool
	Err      error
	Duration time.Duration
}

// WithObserver makes o see every request of the Conn and its life (see
// Observer). nil, the default, observes nothing.
func WithObserver(o Observer) Option { return func(opts *options) { opts.observer = o } }

package bridge

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"time"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// Observer sees every request a downstream client sends the bridge, on
// every face. It is the seam for tracing and metrics (the otel module's
// ServerObserver is one) and keeps the bridge free of any telemetry
// library. Set it in Options.Observer; a bridge without one pays nothing.
// Its methods are called concurrently and must be quick.
//
// A request is observed once it is decoded as a JSON-RPC request (it has a
// method and an id), answered or refused: initialize, ping,
// server/discover, a request refused for its params, headers or revision,
// an unknown method, a request over a limit, subscriptions/listen (one
// request per stream, until it ends). Not observed: notifications, the
// client's answers, a body that is no JSON-RPC message, and an HTTP
// request refused before its body is read (401, 403, 404 for an unknown
// session, 405, 413).
type Observer interface {
	// Request is called as a request arrives. It returns the context the
	// request is served in, derived from ctx: the upstream request it
	// leads to is made in it, so that the upstream Conn's own Observer
	// makes its span a child of this one. A client.TraceContext the
	// returned context carries (client.WithTraceContext) goes upstream in
	// place of the downstream's. It returns the RequestObserver that
	// follows the request, or nil not to follow it.
	Request(ctx context.Context, r *Request) (context.Context, RequestObserver)
}

// RequestObserver follows one downstream request.
type RequestObserver interface {
	// End is called once, with how the request ended, before its answer
	// is written.
	End(o *Outcome)
}

// Request describes a downstream request to an Observer. It must not be
// kept past the call of Request.
type Request struct {
	Method string
	// Name is what the request is about: the tool's name (tools/call), the
	// prompt's (prompts/get), the resource's URI (resources/read,
	// resources/subscribe, resources/unsubscribe); else "".
	Name string
	// ID is the JSON-RPC id: a string id without its quotes, a number as
	// written.
	ID string
	// Era is the downstream's: mcp.EraStateless for a request carrying
	// revision 2026-07-28's _meta, else mcp.EraInitialize.
	Era mcp.Era
	// Transport is the face's, as client.Info names it:
	// client.TransportStreamableHTTP, client.TransportSSE or
	// client.TransportStdio.
	Transport string
	// ProtocolVersion is the downstream's revision, where it says one.
	ProtocolVersion string
	// Session stands for the downstream's session: a digest of its id,
	// never the id, which is the client's key to the session; "" for a
	// request outside a session.
	Session string
	// Trace is the trace context in the request's params._meta (SEP-414).
	Trace client.TraceContext
	// HTTPTrace is the trace context of the HTTP request that carried it
	// (the W3C traceparent, tracestate and baggage headers), if any.
	HTTPTrace client.TraceContext
}

// Outcome is how a downstream request ended: with a result (Err nil), a
// tools/call result that says isError (IsError), or the JSON-RPC error
// the client was answered with. Err.Outcome() says whether the request
// may have run upstream (jsonrpc.OutcomeKey). Cancelled says the client
// cancelled the request and got no answer.
type Outcome struct {
	// Result is the result as answered; it must not be kept past End.
	Result    json.RawMessage
	IsError   bool
	Err       *jsonrpc.Error
	Cancelled bool
	Duration  time.Duration
}

// face describes where a request came in, for the Observer.
type face struct {
	transport string
	era       mcp.Era // "": told by the request's _meta
	version   string  // the session's revision; "": the request's own
	session   string  // the session's digest
	httpTrace client.TraceContext
}

// observation follows one downstream request for the Observer. A nil one
// (no Observer) does nothing.
type observation struct {
	ro      RequestObserver
	method  string
	started time.Time
	ended   bool
}

// observedTrace marks a context whose client.TraceContext the Observer
// set: the upstream request carries it (see traced).
type observedTrace struct{}

// observe starts following msg, a request of the downstream's, and
// returns the context to serve it in: ctx when the bridge has no
// Observer.
func (b *Bridge) observe(ctx context.Context, msg *jsonrpc.Message, f face) (context.Context, *observation) {
	o := b.o.Observer
	if o == nil {
		return ctx, nil
	}
	var p struct {
		Name            string `json:"name"`
		URI             string `json:"uri"`
		ProtocolVersion string `json:"protocolVersion"`
		Meta            struct {
			Traceparent string `json:"traceparent"`
			Tracestate  string `json:"tracestate"`
			Baggage     string `json:"baggage"`
			Version     string `json:"io.modelcontextprotocol/protocolVersion"`
		} `json:"_meta"`
	}
	_ = json.Unmarshal(msg.Params, &p) // a member of the wrong type is left out
	r := &Request{Method: msg.Method, ID: idText(msg.ID), Era: f.era, Transport: f.transport,
		ProtocolVersion: f.version, Session: f.session, HTTPTrace: f.httpTrace,
		Trace: client.TraceContext{Traceparent: p.Meta.Traceparent, Tracestate: p.Meta.Tracestate, Baggage: p.Meta.Baggage}}
	switch msg.Method {
	case "tools/call", "prompts/get":
		r.Name = p.Name
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		r.Name = p.URI
	}
	if r.Era == "" {
		r.Era = mcp.EraInitialize
		if p.Meta.Version != "" {
			r.Era = mcp.EraStateless
		}
	}
	if r.ProtocolVersion == "" {
		r.ProtocolVersion = p.Meta.Version
		if msg.Method == "initialize" {
			r.ProtocolVersion = p.ProtocolVersion
		}
	}
	octx, ro := o.Request(ctx, r)
	if octx == nil {
		octx = ctx
	}
	if tc, ok := client.TraceContextFrom(octx); ok {
		if prev, had := client.TraceContextFrom(ctx); !had || prev != tc {
			octx = context.WithValue(octx, observedTrace{}, true)
		}
	}
	if ro == nil {
		return octx, nil
	}
	return octx, &observation{ro: ro, method: msg.Method, started: time.Now()}
}

// end tells the Observer how the request ended: resp is its answer, nil
// when none goes out (the client cancelled it).
func (ob *observation) end(resp *jsonrpc.Message) {
	if ob == nil || ob.ended {
		return
	}
	ob.ended = true
	out := &Outcome{Duration: time.Since(ob.started), Cancelled: resp == nil}
	if resp != nil {
		out.Result, out.Err = resp.Result, resp.Error
		if ob.method == "tools/call" && resp.Error == nil {
			var r struct {
				IsError bool `json:"isError"`
			}
			_ = json.Unmarshal(resp.Result, &r)
			out.IsError = r.IsError
		}
	}
	ob.ro.End(out)
}

// httpTrace is the W3C trace context of an HTTP request's headers h, for
// the Observer: none without one.
func (b *Bridge) httpTrace(h http.Header) client.TraceContext {
	if b.o.Observer == nil {
		return client.TraceContext{}
	}
	return client.TraceContext{Traceparent: h.Get("Traceparent"), Tracestate: h.Get("Tracestate"), Baggage: h.Get("Baggage")}
}

// idText is id as the conventions' jsonrpc.request.id: a string without
// its quotes, a number as written.
func idText(id jsonrpc.ID) string {
	raw := id.Raw()
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal([]byte(raw), &s) == nil {
			return s
		}
	}
	return raw
}

// sessionDigest stands for a session id before an Observer: the first 16
// bytes of its SHA-256, in hex. The id itself lets anyone who has it use
// the session; its digest does not.
func sessionDigest(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:16])
}

// detach returns a context for an upstream call that may outlive the
// request: ended by the bridge's Close (and by cancel), never by ctx.
// With an Observer it keeps ctx's values (the span the Observer started),
// so that the upstream request continues the request's trace.
func (b *Bridge) detach(ctx context.Context) (context.Context, context.CancelFunc) {
	if b.o.Observer == nil {
		return context.WithCancel(b.ctx)
	}
	c, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(b.ctx, cancel)
	return c, func() {
		stop()
		cancel()
	}
}

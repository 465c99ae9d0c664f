package otelmcp

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/anymcp/anymcp/bridge"
	"github.com/anymcp/anymcp/client"
)

// ServerObserver is a bridge.Observer that traces and measures the
// requests a bridge serves: a SERVER span per downstream request, named
// "{mcp.method.name} {target}", and the metric
// mcp.server.operation.duration. The span's parent is the trace context
// in the request's params._meta, else the HTTP request's traceparent,
// else the span ctx carries; the others become links. The upstream
// request runs under the span: the upstream Conn's Observer makes its
// CLIENT span a child of it, and a Conn without one passes the span's
// trace context on in _meta. One ServerObserver may serve many bridges.
type ServerObserver struct {
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
	opDur    metric.Float64Histogram
	noTraces bool // the propagator injects nothing

	sets   sync.Map // serverKey → attribute.Set, bounded by maxCached
	cached atomic.Int64
}

var _ bridge.Observer = (*ServerObserver)(nil)

// NewServerObserver returns a ServerObserver configured by opts, for
// bridge.Options.Observer.
func NewServerObserver(opts ...Option) *ServerObserver { return newServerObserver(configure(opts)) }

// Server returns a ServerObserver with o's providers and propagators: for
// a bridge whose upstream Conns o observes.
func (o *Observer) Server() *ServerObserver { return newServerObserver(o.cfg) }

func newServerObserver(c config) *ServerObserver {
	o := &ServerObserver{tracer: c.tp.Tracer(instrumentation), prop: c.prop, noTraces: len(c.prop.Fields()) == 0}
	// An instrument that cannot be made is a no-op one.
	o.opDur, _ = c.mp.Meter(instrumentation).Float64Histogram("mcp.server.operation.duration",
		metric.WithUnit("s"),
		metric.WithDescription("The duration of an MCP request as the server sees it, from its arrival to its answer."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	return o
}

// Request starts the request's SERVER span and returns the context the
// bridge serves it in: under the span, carrying its trace context.
func (o *ServerObserver) Request(ctx context.Context, r *bridge.Request) (context.Context, bridge.RequestObserver) {
	sr := &serverRequest{o: o, key: serverKey{method: r.Method, transport: r.Transport, version: r.ProtocolVersion}}
	attrs := make([]attribute.KeyValue, 0, 12)
	attrs = append(attrs, AttrMethodName.String(r.Method))
	switch {
	case r.Method == "tools/call":
		attrs = append(attrs, AttrOperationName.String("execute_tool"))
		if r.Name != "" {
			attrs = append(attrs, AttrToolName.String(r.Name))
			sr.key.name = r.Name
		}
	case r.Method == "prompts/get" && r.Name != "":
		attrs = append(attrs, AttrPromptName.String(r.Name))
		sr.key.name = r.Name
	}
	attrs = append(attrs, connAttrs(r.Transport, r.ProtocolVersion, client.Endpoint{})...)
	sr.common = attrs[:len(attrs):len(attrs)]
	if r.ID != "" {
		attrs = append(attrs, AttrRequestID.String(r.ID))
	}
	if r.Session != "" {
		attrs = append(attrs, AttrSessionID.String(r.Session))
	}
	if isResourceMethod(r.Method) && r.Name != "" {
		attrs = append(attrs, AttrResourceURI.String(r.Name))
	}
	parent, links := o.parent(ctx, r)
	ctx, sr.span = o.tracer.Start(parent, spanName(r.Method, r.Name), trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attrs...), trace.WithLinks(links...))
	sr.ctx = ctx
	if !o.noTraces {
		m := propagation.MapCarrier{}
		o.prop.Inject(ctx, m)
		ctx = client.WithTraceContext(ctx, client.TraceContext{Traceparent: m["traceparent"], Tracestate: m["tracestate"], Baggage: m["baggage"]})
	}
	return ctx, sr
}

// parent returns the context the SERVER span starts under, and the links
// to the other trace contexts the request came with, as the conventions
// ask: the MCP request's own (params._meta) first, then the HTTP
// request's, then the span ctx carries (the host's, an HTTP server
// span).
func (o *ServerObserver) parent(ctx context.Context, r *bridge.Request) (context.Context, []trace.Link) {
	var cands [2]trace.SpanContext
	var carriers [2]client.TraceContext
	for i, tc := range [2]client.TraceContext{r.Trace, r.HTTPTrace} {
		if tc.Traceparent != "" {
			cands[i] = trace.SpanContextFromContext(o.prop.Extract(context.Background(), propagation.MapCarrier(tc.Map())))
			carriers[i] = tc
		}
	}
	ambient := trace.SpanContextFromContext(ctx)
	parent, chosen := ctx, ambient
	for i, sc := range cands {
		if sc.IsValid() {
			parent, chosen = o.prop.Extract(ctx, propagation.MapCarrier(carriers[i].Map())), sc
			break
		}
	}
	var links []trace.Link
	for _, sc := range [3]trace.SpanContext{cands[0], cands[1], ambient} {
		if sc.IsValid() && !sc.Equal(chosen) && !linked(links, sc) {
			links = append(links, trace.Link{SpanContext: sc})
		}
	}
	return parent, links
}

func linked(links []trace.Link, sc trace.SpanContext) bool {
	for _, l := range links {
		if l.SpanContext.Equal(sc) {
			return true
		}
	}
	return false
}

// serverKey is what a point of the server metric is recorded under.
type serverKey struct {
	method, name, transport, version, errType, rpc string
}

// serverRequest follows one downstream request: its span and metric.
type serverRequest struct {
	o      *ServerObserver
	key    serverKey
	common []attribute.KeyValue // the metric's attributes, but for the outcome's
	span   trace.Span
	ctx    context.Context
}

// End sets the outcome's attributes and status, records the duration
// metric and ends the span.
func (s *serverRequest) End(out *bridge.Outcome) {
	var end []attribute.KeyValue
	switch {
	case out.Err != nil:
		s.key.rpc = strconv.FormatInt(out.Err.Code, 10)
		s.key.errType = s.key.rpc
		end = append(end, AttrStatusCode.String(s.key.rpc))
		if oc := out.Err.Outcome(); oc != "" {
			end = append(end, AttrOutcome.String(oc))
		}
		s.span.SetStatus(codes.Error, out.Err.Message)
	case out.Cancelled:
		s.key.errType = ErrorCancelled
		s.span.SetStatus(codes.Error, "the client cancelled the request")
	case out.IsError:
		s.key.errType = ErrorTool
		s.span.SetStatus(codes.Error, "the tool reported an error (isError)")
	}
	if s.key.errType != "" {
		end = append(end, AttrErrorType.String(s.key.errType))
	}
	if len(end) > 0 {
		s.span.SetAttributes(end...)
	}
	s.o.opDur.Record(s.ctx, out.Duration.Seconds(), metric.WithAttributeSet(s.o.set(s.key, s.common)))
	s.span.End()
}

// set returns the metric's attribute set for k, computed once.
func (o *ServerObserver) set(k serverKey, common []attribute.KeyValue) attribute.Set {
	if v, ok := o.sets.Load(k); ok {
		return v.(attribute.Set)
	}
	attrs := common // full: appending copies
	if k.rpc != "" {
		attrs = append(attrs, AttrStatusCode.String(k.rpc))
	}
	if k.errType != "" {
		attrs = append(attrs, AttrErrorType.String(k.errType))
	}
	set := attribute.NewSet(attrs...)
	if o.cached.Add(1) <= maxCached {
		o.sets.Store(k, set)
	}
	return set
}

package otelmcp

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/anymcp/anymcp/client"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// instrumentation is the name of the tracer and meter.
const instrumentation = "github.com/anymcp/anymcp/otel"

// Option configures an Observer.
type Option func(*config)

type config struct {
	tp      trace.TracerProvider
	mp      metric.MeterProvider
	prop    propagation.TextMapPropagator
	content bool
}

// WithTracerProvider makes spans with tp instead of the global one.
func WithTracerProvider(tp trace.TracerProvider) Option { return func(c *config) { c.tp = tp } }

// WithMeterProvider records metrics with mp instead of the global one.
func WithMeterProvider(mp metric.MeterProvider) Option { return func(c *config) { c.mp = mp } }

// WithPropagators injects the trace context into params._meta with p
// instead of the global propagators.
func WithPropagators(p propagation.TextMapPropagator) Option {
	return func(c *config) { c.prop = p }
}

// WithToolContent records a tool call's arguments (gen_ai.tool.call.arguments)
// and successful result (gen_ai.tool.call.result) on its span, as JSON.
// Off by default: they may hold sensitive data.
func WithToolContent() Option { return func(c *config) { c.content = true } }

// Observer is a client.Observer that traces and measures a Conn's
// requests with OpenTelemetry. One Observer may serve many Conns.
type Observer struct {
	cfg      config
	tracer   trace.Tracer
	prop     propagation.TextMapPropagator
	content  bool
	opDur    metric.Float64Histogram
	sessDur  metric.Float64Histogram
	noTraces bool // the propagator injects nothing: skip building _meta

	// Caches of attributes: those of each connection, the operation
	// metric's set of each point (bounded together by maxCached).
	conns  sync.Map // connKey → []attribute.KeyValue
	sets   sync.Map // opKey → attribute.Set
	cached atomic.Int64
}

var _ client.Observer = (*Observer)(nil)

// configure returns the config opts make, with the global providers and
// propagators where they set none.
func configure(opts []Option) config {
	var c config
	for _, opt := range opts {
		opt(&c)
	}
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	if c.prop == nil {
		c.prop = otel.GetTextMapPropagator()
	}
	return c
}

// NewObserver returns an Observer configured by opts.
func NewObserver(opts ...Option) *Observer {
	c := configure(opts)
	meter := c.mp.Meter(instrumentation)
	o := &Observer{
		cfg:      c,
		tracer:   c.tp.Tracer(instrumentation),
		prop:     c.prop,
		content:  c.content,
		noTraces: len(c.prop.Fields()) == 0,
	}
	// An instrument that cannot be made is a no-op one: telemetry never
	// fails the calls.
	o.opDur, _ = meter.Float64Histogram("mcp.client.operation.duration",
		metric.WithUnit("s"),
		metric.WithDescription("The duration of an MCP request as the client sees it, from sending it to its answer."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	o.sessDur, _ = meter.Float64Histogram("mcp.client.session.duration",
		metric.WithUnit("s"),
		metric.WithDescription("The duration of an MCP session as the client sees it."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	return o
}

// Observe is the option that traces and measures a Conn with a new
// Observer: client.Dial(ctx, target, otelmcp.Observe()).
func Observe(opts ...Option) client.Option { return client.WithObserver(NewObserver(opts...)) }

// Request starts following a request: a CLIENT span (or the execute_tool
// span ctx carries, for a tools/call), and the trace context for _meta.
func (o *Observer) Request(ctx context.Context, r *client.Request) (context.Context, client.RequestObserver) {
	ck := connKey{r.Transport, r.ProtocolVersion, r.Server.Address, r.Server.Port}
	ro := &request{o: o, method: r.Method, params: r.Params, conn: ck}
	if r.Method == "tools/call" || r.Method == "prompts/get" {
		ro.name = r.Name
	}
	conn := o.connAttrs(ck)
	attrs := make([]attribute.KeyValue, 0, 4+len(conn)+3)
	attrs = append(attrs, AttrMethodName.String(r.Method))
	switch {
	case r.Method == "tools/call":
		attrs = append(attrs, AttrOperationName.String("execute_tool"))
		if r.Name != "" {
			attrs = append(attrs, AttrToolName.String(r.Name))
		}
	case r.Method == "prompts/get" && r.Name != "":
		attrs = append(attrs, AttrPromptName.String(r.Name))
	}
	attrs = append(attrs, conn...)
	ro.common = attrs[:len(attrs):len(attrs)] // what the metric records too
	if r.SessionID != "" {
		attrs = append(attrs, AttrSessionID.String(r.SessionID))
	}
	if isResourceMethod(r.Method) && r.Name != "" {
		attrs = append(attrs, AttrResourceURI.String(r.Name))
	}
	if r.TaskID != "" {
		attrs = append(attrs, AttrTaskID.String(r.TaskID))
	}
	ctx = o.continueIncoming(ctx)
	if r.Method == "tools/call" {
		if span := trace.SpanFromContext(ctx); isExecuteTool(span) {
			// The host's own GenAI instrumentation traces the tool call:
			// the MCP attributes go on its span, as the conventions say.
			ro.span, ro.borrowed = span, true
			span.SetAttributes(attrs...)
			return ctx, ro
		}
	}
	ctx, ro.span = o.tracer.Start(ctx, spanName(r.Method, r.Name),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	ro.ctx = ctx
	return ctx, ro
}

// continueIncoming returns ctx with the trace context of the request being
// served (client.WithTraceContext: a bridge's downstream request) as the
// parent of the spans started under it, as the propagator reads it. A span
// ctx already carries of the same trace (one the host started while
// serving that request) stays the parent; one of another trace (a
// process-wide span, as mcpcall's run) gives way to the request's.
func (o *Observer) continueIncoming(ctx context.Context) context.Context {
	in, ok := client.TraceContextFrom(ctx)
	if !ok {
		return ctx
	}
	pctx := o.prop.Extract(context.Background(), propagation.MapCarrier(in.Map()))
	parent := trace.SpanContextFromContext(pctx)
	if !parent.IsValid() {
		return ctx
	}
	if cur := trace.SpanContextFromContext(ctx); cur.IsValid() && cur.TraceID() == parent.TraceID() {
		return ctx
	}
	return o.prop.Extract(ctx, propagation.MapCarrier(in.Map()))
}

// connKey is what the attributes of a connection depend on.
type connKey struct {
	transport, version, addr string
	port                     int
}

// maxCached bounds each cache of attributes an Observer keeps: beyond it,
// attributes are computed for each request.
const maxCached = 4096

// connAttrs returns the attributes of the connection k, computed once.
func (o *Observer) connAttrs(k connKey) []attribute.KeyValue {
	if v, ok := o.conns.Load(k); ok {
		return v.([]attribute.KeyValue)
	}
	attrs := connAttrs(k.transport, k.version, client.Endpoint{Address: k.addr, Port: k.port})
	if o.cached.Add(1) <= maxCached {
		o.conns.Store(k, attrs)
	}
	return attrs
}

// opKey is what a point of the operation metric is recorded under.
type opKey struct {
	conn                       connKey
	method, name, errType, rpc string
}

// opSet returns the attribute set of the operation metric for k, whose
// attributes are attrs, computed once.
func (o *Observer) opSet(k opKey, attrs []attribute.KeyValue) attribute.Set {
	if v, ok := o.sets.Load(k); ok {
		return v.(attribute.Set)
	}
	set := attribute.NewSet(attrs...)
	if o.cached.Add(1) <= maxCached {
		o.sets.Store(k, set)
	}
	return set
}

// Opened records nothing: a session's duration is recorded when it ends.
func (o *Observer) Opened(context.Context, *client.ConnEvent) {}

// Closed records the session's duration.
func (o *Observer) Closed(c *client.ConnEvent) {
	attrs := connAttrs(c.Info.Transport, c.Info.ProtocolVersion, c.Server)
	if et := errorType(c.Err); et != "" && et != ErrorClosed {
		attrs = append(attrs, AttrErrorType.String(et))
	}
	o.sessDur.Record(context.Background(), c.Lived.Seconds(), metric.WithAttributes(attrs...))
}

// spanName is "{mcp.method.name} {target}", the target being a tool's or a
// prompt's name; a resource URI (high cardinality) is left out.
func spanName(method, name string) string {
	if name != "" && (method == "tools/call" || method == "prompts/get") {
		return method + " " + name
	}
	return method
}

func isResourceMethod(method string) bool {
	return method == "resources/read" || method == "resources/subscribe" || method == "resources/unsubscribe"
}

// isExecuteTool reports whether span is a GenAI execute_tool span still
// recording: it says gen_ai.operation.name execute_tool, or (when its
// attributes cannot be read) its name is "execute_tool …". A SERVER span
// (a bridge's, serving a downstream tools/call) is none: the upstream
// call is a request of its own.
func isExecuteTool(span trace.Span) bool {
	if !span.IsRecording() {
		return false
	}
	if k, ok := span.(interface{ SpanKind() trace.SpanKind }); ok && k.SpanKind() == trace.SpanKindServer {
		return false
	}
	if ro, ok := span.(interface{ Attributes() []attribute.KeyValue }); ok {
		for _, kv := range ro.Attributes() {
			if kv.Key == AttrOperationName {
				return kv.Value.AsString() == "execute_tool"
			}
		}
	}
	if n, ok := span.(interface{ Name() string }); ok {
		name := n.Name()
		return name == "execute_tool" || len(name) > len("execute_tool ") && name[:len("execute_tool ")] == "execute_tool "
	}
	return false
}

// connAttrs are the attributes of the connection a request goes over.
func connAttrs(transport, version string, server client.Endpoint) []attribute.KeyValue {
	var attrs []attribute.KeyValue
	if version != "" {
		attrs = append(attrs, AttrProtocolVersion.String(version))
	}
	switch transport {
	case client.TransportStdio:
		attrs = append(attrs, AttrNetworkTransport.String("pipe"))
	case client.TransportStreamableHTTP, client.TransportSSE:
		attrs = append(attrs, AttrNetworkTransport.String("tcp"), AttrNetworkProtocolName.String("http"))
	}
	if server.Address != "" {
		attrs = append(attrs, AttrServerAddress.String(server.Address))
		if server.Port != 0 {
			attrs = append(attrs, AttrServerPort.Int(server.Port))
		}
	}
	return attrs
}

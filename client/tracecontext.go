package client

import (
	"context"
	"strings"
)

// TraceContext is the W3C trace context of a request the host is serving:
// traceparent, tracestate and baggage in params._meta (SEP-414). A context
// carries it, so that the requests a Conn sends for it continue its trace.
// Without an Observer, the Conn copies these members unchanged into each
// request's params._meta. With one, the Observer's own members win. The
// otel module makes its span a child of this context and writes its own
// traceparent. Members the Observer does not write are passed on as here.
type TraceContext struct {
	Traceparent string
	Tracestate  string
	Baggage     string
}

// Map returns the non-empty members under their _meta keys.
func (t TraceContext) Map() map[string]string {
	m := make(map[string]string, 3)
	for _, kv := range t.members() {
		m[kv[0]] = kv[1]
	}
	return m
}

// members are the non-empty members, key and value, in key order.
func (t TraceContext) members() [][2]string {
	var out [][2]string
	for _, kv := range [][2]string{{"baggage", t.Baggage}, {"traceparent", t.Traceparent}, {"tracestate", t.Tracestate}} {
		if kv[1] != "" {
			out = append(out, kv)
		}
	}
	return out
}

type traceContextKey struct{}

// WithTraceContext returns ctx carrying t as the trace context of the
// request being served (a bridge, a proxy or a server that calls another
// server for a request it got). A t without a traceparent carries nothing
// (tracestate and baggage mean nothing without it). Values are kept as
// given but for surrounding white space; a value over 8 KiB is dropped.
func WithTraceContext(ctx context.Context, t TraceContext) context.Context {
	t.Traceparent = clip(t.Traceparent)
	if t.Traceparent == "" {
		return ctx
	}
	t.Tracestate, t.Baggage = clip(t.Tracestate), clip(t.Baggage)
	return context.WithValue(ctx, traceContextKey{}, t)
}

// TraceContextFrom returns the trace context ctx carries (WithTraceContext).
func TraceContextFrom(ctx context.Context) (TraceContext, bool) {
	t, ok := ctx.Value(traceContextKey{}).(TraceContext)
	return t, ok
}

// maxTraceValue bounds one member: W3C allows 512 bytes of tracestate and
// 8,192 of baggage; a longer value is no trace context.
const maxTraceValue = 8 << 10

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > maxTraceValue {
		return ""
	}
	return s
}

// withIncoming returns the observer's _meta members m with those of the
// trace context ctx carries that m lacks.
func withIncoming(ctx context.Context, m map[string]string) map[string]string {
	t, ok := TraceContextFrom(ctx)
	if !ok {
		return m
	}
	out := make(map[string]string, len(m)+3)
	for k, v := range m {
		out[k] = v
	}
	for _, kv := range t.members() {
		if _, ok := out[kv[0]]; !ok {
			out[kv[0]] = kv[1]
		}
	}
	return out
}

// extraMeta returns meta with the members a request adds besides the
// dialect's: the observer's (ob), which include those of the incoming trace
// context, or, without an observer, those of the trace context ctx carries.
func extraMeta(ctx context.Context, ob *observed, meta []byte) []byte {
	if ob != nil {
		return ob.withObserverMeta(meta)
	}
	t, ok := TraceContextFrom(ctx)
	if !ok {
		return meta
	}
	return (&observed{meta: encodeMeta(t.Map())}).withObserverMeta(meta)
}

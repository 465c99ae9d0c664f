// Package otelmcp traces and measures an anymcp client with OpenTelemetry,
// as OpenTelemetry's semantic conventions for MCP describe: a CLIENT span
// per request named "{mcp.method.name} {target}" ("tools/call echo") with
// the conventions' attributes, the metrics mcp.client.operation.duration
// and mcp.client.session.duration, and the trace context in each request's
// params._meta (traceparent, tracestate, baggage: SEP-414), on every
// transport and era, so that a server continues the client's trace.
//
// It is one option on a Conn:
//
//	conn, err := client.Dial(ctx, target, otelmcp.Observe())
//
// which uses the global TracerProvider, MeterProvider and propagators
// unless WithTracerProvider, WithMeterProvider or WithPropagators say
// otherwise. It is built on the client package's Observer seam, and lives
// in a module of its own so that the core module imports no OpenTelemetry.
//
// Retries, resends, re-initializations, input_required rounds and task
// creation are events on the request's span; a task's polls and any
// request the Conn makes on the call's behalf are child spans.
// NewServerObserver (or an Observer's Server) is the bridge's side: a
// SERVER span per downstream request and mcp.server.operation.duration,
// parent of the upstream request's CLIENT span.
// TraceHandler adds trace and span ids to slog records (the library's own
// logs included), and ServerLogs bridges a server's notifications/message
// to slog and OpenTelemetry logs. docs/observability.md has the details.
package otelmcp

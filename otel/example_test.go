package otelmcp_test

import (
	"context"
	"fmt"
	"net/http/httptest"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/anymcp/anymcp/bridge"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
	otelmcp "github.com/anymcp/anymcp/otel"
	"github.com/anymcp/anymcp/testservers"
)

// Tracing a Conn is one option. Every request is a span: the handshake's
// (this server speaks the initialize era: the stateless probe is refused,
// then initialize is answered), then the call's. Here the spans go to
// memory; a host passes
// its own TracerProvider (or sets the global one, which Observe uses by
// default), and the same for metrics and propagators.
func Example() {
	server := testservers.StartStreamable(testservers.HTTPOptions{})
	defer server.Close()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(context.Background())

	ctx := context.Background()
	conn, err := client.Dial(ctx, client.URL(server.URL), otelmcp.Observe(otelmcp.WithTracerProvider(tp)))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	if _, err := conn.CallTool(ctx, "echo", map[string]string{"text": "hello"}); err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range spans.GetSpans() {
		fmt.Println(s.Name, s.SpanKind)
		for _, kv := range s.Attributes {
			if kv.Key == otelmcp.AttrMethodName || kv.Key == otelmcp.AttrToolName || kv.Key == otelmcp.AttrNetworkTransport {
				fmt.Printf("  %s=%s\n", kv.Key, kv.Value.Emit())
			}
		}
	}
	// Output:
	// server/discover client
	//   mcp.method.name=server/discover
	//   network.transport=tcp
	// initialize client
	//   mcp.method.name=initialize
	//   network.transport=tcp
	// tools/call echo client
	//   mcp.method.name=tools/call
	//   gen_ai.tool.name=echo
	//   network.transport=tcp
}

// A bridge traced both ways: each downstream request is a SERVER span,
// its upstream request a CLIENT span under it. One Observer serves the
// upstream Conns; its Server serves the bridge. The downstream client
// here traces nothing and passes a trace context of its own. (The
// tools/list is the bridge's: it learns the tool's x-mcp-header
// parameters before the first call.)
func ExampleObserver_Server() {
	upstream := testservers.StartStreamable(testservers.HTTPOptions{})
	defer upstream.Close()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(context.Background())
	obs := otelmcp.NewObserver(otelmcp.WithTracerProvider(tp), otelmcp.WithPropagators(propagation.TraceContext{}))

	ctx := context.Background()
	b, err := bridge.New(ctx, bridge.DialTarget(client.URL(upstream.URL), client.WithObserver(obs)), bridge.Options{Observer: obs.Server()})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()
	defer b.Close()
	conn, err := client.Dial(ctx, client.URL(srv.URL+"/mcp"), client.WithProtocolVersion(mcp.LatestStatelessVersion))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	spans.Reset() // the handshakes' spans
	in := client.TraceContext{Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	if _, err := conn.CallTool(client.WithTraceContext(ctx, in), "echo", map[string]string{"text": "hello"}); err != nil {
		fmt.Println(err)
		return
	}
	var server tracetest.SpanStub
	for _, s := range spans.GetSpans() {
		if s.SpanKind == trace.SpanKindServer {
			server = s
		}
	}
	for _, s := range spans.GetSpans() {
		parent := "another span"
		switch s.Parent.SpanID().String() {
		case server.SpanContext.SpanID().String():
			parent = "the SERVER span"
		case in.Traceparent[36:52]: // 00f067aa0ba902b7
			parent = "the client's span"
		}
		fmt.Println(s.SpanKind, s.Name, "in trace", s.SpanContext.TraceID(), "under", parent)
	}
	// Output:
	// client tools/list in trace 4bf92f3577b34da6a3ce929d0e0e4736 under the SERVER span
	// client tools/call echo in trace 4bf92f3577b34da6a3ce929d0e0e4736 under the SERVER span
	// server tools/call echo in trace 4bf92f3577b34da6a3ce929d0e0e4736 under the client's span
}

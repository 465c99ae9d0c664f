package otelmcp_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/anymcp/anymcp/bridge"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
	otelmcp "github.com/anymcp/anymcp/otel"
	"github.com/anymcp/anymcp/testservers"
)

// BenchmarkCallTool measures a sequential tools/call over Streamable HTTP
// (JSON answers, loopback) with no observer, with the observer on the
// default (no-op) providers, and with the SDK recording every span and
// both metrics (no exporter: the SDK's own cost) and W3C propagation.
func BenchmarkCallTool(b *testing.B) {
	b.Run("no-observer", func(b *testing.B) { benchCall(b) })
	b.Run("otel-noop", func(b *testing.B) { benchCall(b, otelmcp.Observe()) })
	b.Run("otel-sdk", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		defer tp.Shutdown(context.Background())
		defer mp.Shutdown(context.Background())
		benchCall(b, otelmcp.Observe(otelmcp.WithTracerProvider(tp), otelmcp.WithMeterProvider(mp),
			otelmcp.WithPropagators(propagation.TraceContext{})))
	})
}

func benchCall(b *testing.B, opts ...client.Option) {
	s := testservers.StartStreamable(testservers.HTTPOptions{JSONResponse: true})
	defer s.Close()
	ctx := context.Background()
	c, err := client.Dial(ctx, client.URL(s.URL), opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	args := map[string]string{"text": "hello, benchmark"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.CallTool(ctx, "echo", args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBridgeCallTool measures a sequential stateless tools/call
// through a bridge (in process, loopback) before an initialize-era
// upstream: with no observers, and with the SDK recording the bridge's
// SERVER span and its upstream CLIENT span (ServerObserver and Observer),
// both metrics, W3C propagation. The difference is what tracing the
// bridge both ways costs per call.
func BenchmarkBridgeCallTool(b *testing.B) {
	b.Run("no-observer", func(b *testing.B) { benchBridge(b, nil) })
	b.Run("otel-sdk", func(b *testing.B) {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		defer tp.Shutdown(context.Background())
		defer mp.Shutdown(context.Background())
		benchBridge(b, otelmcp.NewObserver(otelmcp.WithTracerProvider(tp), otelmcp.WithMeterProvider(mp),
			otelmcp.WithPropagators(propagation.TraceContext{})))
	})
}

func benchBridge(b *testing.B, obs *otelmcp.Observer) {
	up := testservers.StartStreamable(testservers.HTTPOptions{JSONResponse: true})
	defer up.Close()
	ctx := context.Background()
	var opts []client.Option
	var o bridge.Options
	if obs != nil {
		opts = append(opts, client.WithObserver(obs))
		o.Observer = obs.Server()
	}
	br, err := bridge.New(ctx, bridge.DialTarget(client.URL(up.URL), opts...), o)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(br.Handler())
	defer srv.Close()
	defer br.Close()
	c, err := client.Dial(ctx, client.URL(srv.URL+"/mcp"), client.WithProtocolVersion(mcp.LatestStatelessVersion))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	in := client.TraceContext{Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	cctx := client.WithTraceContext(ctx, in)
	args := map[string]string{"text": "hello, benchmark"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.CallTool(cctx, "echo", args); err != nil {
			b.Fatal(err)
		}
	}
}

package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/anymcp/anymcp/client"
	otelmcp "github.com/anymcp/anymcp/otel"
)

// What mcpcall exports with the standard OTEL_* variables: its requests'
// spans and the MCP metrics, over OTLP/HTTP with JSON (telemetry_otlp.go),
// flushed before it exits. A signal is on when its exporter variable says otlp
// (OTEL_TRACES_EXPORTER, OTEL_METRICS_EXPORTER), or, that variable unset,
// when an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT, or the
// signal's own); "none" turns it off, and so does OTEL_SDK_DISABLED=true.
// Unlike the SDKs' default (otlp when the variable is unset), nothing set
// means nothing exported and nothing built: a run without OTEL_* costs
// nothing.

// telemetry is what a run exports; nil when it exports nothing.
type telemetry struct {
	tp       *sdktrace.TracerProvider // nil: no traces
	mp       *sdkmetric.MeterProvider // nil: no metrics
	prop     propagation.TextMapPropagator
	observer *otelmcp.Observer
	span     trace.Span    // the run's own span, parent of its requests'
	cutAt    atomic.Int64  // when the run was interrupted or ran out of time (unix ns); 0: it was not
	grace    time.Duration // how long the flush may take after a cut
	getenv   func(string) string
}

// telemetryFlushTimeout bounds the flush of a run that ended by itself.
const telemetryFlushTimeout = 5 * time.Second

// otlpProtocol is the one OTLP protocol mcpcall exports with: OTLP/HTTP
// with JSON, by exporters of its own (telemetry_otlp.go says why). An
// OTLP/HTTP receiver takes it on the port it takes http/protobuf on
// (4318), so http/protobuf, the SDKs' default that many environments set,
// is sent as http/json too. grpc is refused: its exporters were 64 s of a
// 98 s cold build (docs/benchmarks.md).
const otlpProtocol = "http/json"

// signalOn reports whether a signal (TRACES, METRICS) is to be exported,
// and over which protocol.
func signalOn(getenv func(string) string, signal string) (on bool, protocol string, err error) {
	exp := strings.TrimSpace(strings.ToLower(getenv("OTEL_" + signal + "_EXPORTER")))
	switch exp {
	case "":
		on = getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT") != ""
	case "otlp":
		on = true
	case "none":
		return false, "", nil
	default:
		return false, "", fmt.Errorf("OTEL_%s_EXPORTER=%s: mcpcall exports otlp or none", signal, exp)
	}
	if !on {
		return false, "", nil
	}
	protocol = getenv("OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL")
	if protocol == "" {
		protocol = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch protocol {
	case "", otlpProtocol, "http/protobuf":
		return true, otlpProtocol, nil
	case "grpc":
		return false, "", fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=grpc: mcpcall exports OTLP over HTTP only, as http/json (a collector listens for it on port 4318); set OTEL_EXPORTER_OTLP_PROTOCOL=http/json")
	}
	return false, "", fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%s: mcpcall exports OTLP over HTTP only, as http/json", protocol)
}

// otlpEndpoint returns the endpoint URL of a signal as the variables
// give it ("" for the exporter's default): the signal's own as is, the
// general one with the signal's path.
func otlpEndpoint(getenv func(string) string, signal string) string {
	if e := getenv("OTEL_EXPORTER_OTLP_" + signal + "_ENDPOINT"); e != "" {
		return e
	}
	e := getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	if e == "" {
		return e
	}
	return strings.TrimSuffix(e, "/") + "/v1/" + strings.ToLower(signal)
}

// startTelemetry builds the exporters the OTEL_* variables ask for; nil
// when they ask for none. A signal whose variables it cannot honour (an
// exporter other than otlp, grpc, a malformed OTEL_EXPORTER_OTLP_* value)
// is left off with a warning: the environment may be meant for other
// programs, and telemetry never fails a run.
func startTelemetry(ctx context.Context, getenv func(string) string, warn func(msg string, args ...any)) (*telemetry, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return nil, nil
	}
	traces, _, err := signalOn(getenv, "TRACES")
	if err != nil {
		warn("not exporting traces", "err", err)
	}
	metrics, _, err := signalOn(getenv, "METRICS")
	if err != nil {
		warn("not exporting metrics", "err", err)
	}
	if !traces && !metrics {
		return nil, nil
	}
	res, err := telemetryResource(ctx, getenv)
	if err != nil {
		warn("OpenTelemetry resource", "err", err)
	}
	// Export errors are reported once each, as warnings, never as the
	// run's failure.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { warn("OpenTelemetry export", "err", err) }))
	t := &telemetry{prop: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}), grace: exitGrace, getenv: getenv}
	opts := []otelmcp.Option{otelmcp.WithPropagators(t.prop)}
	if traces {
		cfg, err := otlpSettings(getenv, "traces")
		if err != nil {
			warn("not exporting traces", "err", err)
			traces = false
		} else {
			exp := &otlpSpanExporter{s: newOTLPSender(cfg)}
			t.tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		}
	}
	if metrics {
		cfg, err := otlpSettings(getenv, "metrics")
		var ts sdkmetric.TemporalitySelector
		var as sdkmetric.AggregationSelector
		if err == nil {
			ts, as, err = metricSelectors(getenv)
		}
		if err != nil {
			warn("not exporting metrics", "err", err)
			metrics = false
		} else {
			exp := &otlpMetricExporter{s: newOTLPSender(cfg), temporality: ts, aggregation: as}
			t.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)), sdkmetric.WithResource(res))
		}
	}
	if !traces && !metrics {
		return nil, nil
	}
	if t.tp != nil {
		opts = append(opts, otelmcp.WithTracerProvider(t.tp))
	} else {
		opts = append(opts, otelmcp.WithTracerProvider(tracenoop.NewTracerProvider()))
	}
	if t.mp != nil {
		opts = append(opts, otelmcp.WithMeterProvider(t.mp))
	} else {
		opts = append(opts, otelmcp.WithMeterProvider(metricnoop.NewMeterProvider()))
	}
	t.observer = otelmcp.NewObserver(opts...)
	return t, nil
}

// telemetryResource describes mcpcall: service.name is OTEL_SERVICE_NAME,
// else "mcpcall"; OTEL_RESOURCE_ATTRIBUTES adds to it.
func telemetryResource(ctx context.Context, getenv func(string) string) (*resource.Resource, error) {
	name := getenv("OTEL_SERVICE_NAME")
	if name == "" {
		name = "mcpcall"
	}
	return resource.New(ctx, resource.WithTelemetrySDK(), resource.WithFromEnv(),
		resource.WithAttributes(attribute.String("service.name", name), attribute.String("service.version", moduleVersion())))
}

// option is the Conn option that traces and measures it.
func (t *telemetry) option() client.Option { return client.WithObserver(t.observer) }

// start begins the run's span, named for the command ("mcpcall tools
// call"), and notes when run is cut short. A TRACEPARENT (with TRACESTATE,
// BAGGAGE) in the environment, as a CI job or a script that traces itself
// sets it, makes the run's span a child of that one.
func (t *telemetry) start(run context.Context, name string) context.Context {
	context.AfterFunc(run, func() { t.cutAt.CompareAndSwap(0, time.Now().UnixNano()) })
	carrier := propagation.MapCarrier{}
	for _, k := range []string{"traceparent", "tracestate", "baggage"} {
		if v := t.getenv(strings.ToUpper(k)); v != "" {
			carrier[k] = v
		}
	}
	run = t.prop.Extract(run, carrier)
	if t.tp == nil {
		return run
	}
	ctx, span := t.tp.Tracer("github.com/anymcp/anymcp/cmd/mcpcall").Start(run, name, trace.WithSpanKind(trace.SpanKindInternal))
	t.span = span
	return ctx
}

// finish ends the run's span with err, and flushes and stops the
// exporters: within telemetryFlushTimeout, or, when the run was
// interrupted or ran out of time, within what is left of exitGrace.
func (t *telemetry) finish(err error) {
	if t.span != nil {
		if err != nil {
			t.span.SetStatus(codes.Error, err.Error())
		}
		t.span.End()
	}
	bound := telemetryFlushTimeout
	if at := t.cutAt.Load(); at != 0 {
		bound = max(t.grace-time.Since(time.Unix(0, at)), 50*time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	t.shutdown(ctx)
}

// shutdown flushes and stops the exporters, bounded by ctx.
func (t *telemetry) shutdown(ctx context.Context) {
	var errs []error
	if t.tp != nil {
		errs = append(errs, t.tp.Shutdown(ctx))
	}
	if t.mp != nil {
		errs = append(errs, t.mp.Shutdown(ctx))
	}
	if err := errors.Join(errs...); err != nil {
		otel.Handle(fmt.Errorf("flushing: %w", err))
	}
}

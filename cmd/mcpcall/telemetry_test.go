package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/anymcp/anymcp/testservers"
)

// otlpReceiver is an in-process OTLP collector: what mcpcall exported.
type otlpReceiver struct {
	mu      sync.Mutex
	spans   []*tracepb.Span
	service []string // service.name of each batch of spans
	metrics []string // names of the metrics received
	got     chan struct{}
}

func newOTLPReceiver() *otlpReceiver { return &otlpReceiver{got: make(chan struct{}, 64)} }

func (o *otlpReceiver) addTraces(req *colltrace.ExportTraceServiceRequest) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.Key == "service.name" {
				o.service = append(o.service, kv.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.ScopeSpans {
			o.spans = append(o.spans, ss.Spans...)
		}
	}
}

func (o *otlpReceiver) addMetrics(req *collmetrics.ExportMetricsServiceRequest) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, rm := range req.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				o.metrics = append(o.metrics, m.Name)
			}
		}
	}
}

// ServeHTTP is OTLP over HTTP (http/protobuf).
func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var resp proto.Message
	switch r.URL.Path {
	case "/v1/traces":
		var req colltrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		o.addTraces(&req)
		resp = &colltrace.ExportTraceServiceResponse{}
	case "/v1/metrics":
		var req collmetrics.ExportMetricsServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		o.addMetrics(&req)
		resp = &collmetrics.ExportMetricsServiceResponse{}
	default:
		http.NotFound(w, r)
		return
	}
	b, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(b)
}

// span returns the one span named name.
func (o *otlpReceiver) span(t *testing.T, name string) *tracepb.Span {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	var found []*tracepb.Span
	var names []string
	for _, s := range o.spans {
		names = append(names, s.Name)
		if s.Name == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans named %q exported; all: %q", len(found), name, names)
	}
	return found[0]
}

// checkExport checks what one tools/call run exported: the run's span,
// the call's CLIENT span under it, the trace context the server got, the
// metrics, and the service name.
func (o *otlpReceiver) checkExport(t *testing.T, srv *testservers.Server, callSpan string, wantError bool) {
	t.Helper()
	root := o.span(t, "mcpcall tools call")
	call := o.span(t, callSpan)
	if string(call.ParentSpanId) != string(root.SpanId) || string(call.TraceId) != string(root.TraceId) {
		t.Errorf("the call's span is not the run's child")
	}
	if call.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Errorf("the call's span kind %v", call.Kind)
	}
	if wantError != (root.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR) {
		t.Errorf("the run's span status %v; want error: %v", root.GetStatus(), wantError)
	}
	if srv != nil {
		found := false
		for _, tc := range srv.TraceContexts() {
			if tc.Method == "tools/call" && tc.TraceID == hexOf(call.TraceId) && tc.ParentID == hexOf(call.SpanId) {
				found = true
			}
		}
		if !found {
			t.Errorf("the server received %+v, not the call's span as parent", srv.TraceContexts())
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, m := range []string{"mcp.client.operation.duration", "mcp.client.session.duration"} {
		if !strings.Contains(strings.Join(o.metrics, " "), m) {
			t.Errorf("metric %s not exported; got %q", m, o.metrics)
		}
	}
	for _, s := range o.service {
		if s != "mcpcall-test" {
			t.Errorf("service.name %q, want OTEL_SERVICE_NAME's", s)
		}
	}
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

// TestOTLPExport: with OTEL_EXPORTER_OTLP_ENDPOINT set, mcpcall exports
// the run's span, the request's spans and the MCP metrics over OTLP,
// http/protobuf, flushed before it exits; the server receives the call's
// trace context.
func TestOTLPExport(t *testing.T) {
	recv := newOTLPReceiver()
	hs := httptest.NewServer(recv)
	defer hs.Close()
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	r := newRunner(t)
	r.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = hs.URL
	r.env["OTEL_EXPORTER_OTLP_PROTOCOL"] = "http/protobuf"
	r.env["OTEL_SERVICE_NAME"] = "mcpcall-test"
	r.runOK("tools", "call", "echo", "text=hi", srv.URL)
	recv.checkExport(t, srv.Server(), "tools/call echo", false)
}

// TestOTLPExportContinuesTraceparent: a TRACEPARENT in the environment
// makes the run's span its child, in its trace.
func TestOTLPExportContinuesTraceparent(t *testing.T) {
	recv := newOTLPReceiver()
	hs := httptest.NewServer(recv)
	defer hs.Close()
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	r := newRunner(t)
	r.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = hs.URL
	r.env["OTEL_SERVICE_NAME"] = "mcpcall-test"
	r.env["TRACEPARENT"] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	r.runOK("tools", "call", "echo", "text=hi", srv.URL)
	recv.checkExport(t, srv.Server(), "tools/call echo", false)
	root := recv.span(t, "mcpcall tools call")
	if hexOf(root.TraceId) != "4bf92f3577b34da6a3ce929d0e0e4736" || hexOf(root.ParentSpanId) != "00f067aa0ba902b7" {
		t.Errorf("the run's span: trace %s, parent %s; want TRACEPARENT's", hexOf(root.TraceId), hexOf(root.ParentSpanId))
	}
}

// TestOTLPExportAfterFailure: a run cut short — the tool failed, --max-time
// ran out, or Ctrl-C — still exports what it did, within the exit bound.
func TestOTLPExportAfterFailure(t *testing.T) {
	const maxTime = 1500 * time.Millisecond
	for _, tc := range []struct {
		name  string
		code  int
		args  []string
		ctrlC bool
	}{
		{"tool-error", exitToolError, []string{"tools", "call", "fail", "message=no"}, false},
		{"max-time", exitTimeout, []string{"tools", "call", "slow", "steps=1", "delayMs=20000", "--max-time", maxTime.String()}, false},
		{"ctrl-c", exitInterrupt, []string{"tools", "call", "slow", "steps=1", "delayMs=20000"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recv := newOTLPReceiver()
			hs := httptest.NewServer(recv)
			defer hs.Close()
			srv := testservers.StartStreamable(testservers.HTTPOptions{})
			defer srv.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.ctrlC {
				// Ctrl-C once the server runs the call.
				go func() {
					wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
					defer wcancel()
					srv.Server().WaitStats(wctx, func(st testservers.Stats) bool { return st.ToolCalls["slow"] > 0 })
					cancel()
				}()
			}
			r := newRunner(t)
			r.ctx = ctx
			r.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = hs.URL
			r.env["OTEL_SERVICE_NAME"] = "mcpcall-test"
			start := time.Now()
			res := r.run(append(tc.args, srv.URL)...)
			if res.code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %s", res.code, tc.code, res.stderr)
			}
			if took := time.Since(start); tc.name == "max-time" && took > maxTime+exitSlack {
				t.Errorf("exited %v after the start: over --max-time and the exit bound", took)
			}
			recv.checkExport(t, nil, "tools/call "+tc.args[2], true)
		})
	}
}

// TestTraceShowsTraceparent: with telemetry on, --trace shows the
// traceparent each request carries in _meta; with no OTEL_* set there is
// none (no observer at all).
func TestTraceShowsTraceparent(t *testing.T) {
	recv := newOTLPReceiver()
	hs := httptest.NewServer(recv)
	defer hs.Close()
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	for _, on := range []bool{false, true} {
		r := newRunner(t)
		if on {
			r.env["OTEL_TRACES_EXPORTER"] = "otlp"
			r.env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = hs.URL + "/v1/traces"
		}
		file := filepath.Join(r.home, "trace.ndjson")
		r.runOK("tools", "call", "echo", "text=hi", "--trace", file, srv.URL)
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(data), `"traceparent":"00-`); got != on {
			t.Errorf("telemetry on %v: traceparent in --trace %v", on, got)
		}
	}
}

// TestTelemetrySettings: which OTEL_* settings turn export on, and which
// are refused.
func TestTelemetrySettings(t *testing.T) {
	for _, tc := range []struct {
		env            map[string]string
		traces, metric bool
		proto          string
		err            bool
	}{
		{env: nil},
		{env: map[string]string{"OTEL_SERVICE_NAME": "x"}},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, traces: true, metric: true, proto: "http/protobuf"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, traces: true, proto: "http/protobuf"},
		{env: map[string]string{"OTEL_METRICS_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, err: true},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, err: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_METRICS_EXPORTER": "none"}, traces: true, proto: "http/protobuf"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_SDK_DISABLED": "true"}},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, err: true},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, err: true},
	} {
		getenv := func(k string) string { return tc.env[k] }
		if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
			tel, err := startTelemetry(context.Background(), getenv, func(string, ...any) {})
			if tel != nil || err != nil {
				t.Errorf("%v: telemetry %v, %v; want none", tc.env, tel, err)
			}
			continue
		}
		tr, tp, terr := signalOn(getenv, "TRACES")
		mt, mp, merr := signalOn(getenv, "METRICS")
		if (terr != nil || merr != nil) != tc.err {
			t.Errorf("%v: errors %v, %v; want error %v", tc.env, terr, merr, tc.err)
			continue
		}
		if tc.err {
			continue
		}
		if tr != tc.traces || mt != tc.metric || (tr && tp != tc.proto) || (mt && mp != tc.proto) {
			t.Errorf("%v: traces %v %q, metrics %v %q; want %v, %v, %q", tc.env, tr, tp, mt, mp, tc.traces, tc.metric, tc.proto)
		}
	}
	if got := otlpEndpoint(func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://h:4318/"}[k]
	}, "METRICS"); got != "http://h:4318/v1/metrics" {
		t.Errorf("endpoint %q", got)
	}
}

// TestTelemetryMisconfigWarns: OTEL_* values mcpcall cannot honour (meant
// for other programs, say) leave the signal off with a warning; the run
// goes on as without them.
func TestTelemetryMisconfigWarns(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	r := newRunner(t)
	r.env["OTEL_TRACES_EXPORTER"] = "zipkin"
	r.env["OTEL_METRICS_EXPORTER"] = "otlp"
	r.env["OTEL_EXPORTER_OTLP_PROTOCOL"] = "http/json"
	res := r.runOK("tools", "call", "echo", "text=hi", srv.URL)
	for _, want := range []string{"not exporting traces", "zipkin", "not exporting metrics", "http/json"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("stderr %q does not say %q", res.stderr, want)
		}
	}
	if n := len(srv.Server().TraceContexts()); n != 0 {
		t.Errorf("the server received %d trace contexts from a run that exports nothing", n)
	}
}

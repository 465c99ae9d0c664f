package main

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/testservers"
)

// The OTLP/JSON messages as a receiver reads them: written from the OTLP
// specification, apart from mcpcall's encoder, so that a mistake in one
// is not repeated in the other.
type (
	jsonKV struct {
		Key   string         `json:"key"`
		Value map[string]any `json:"value"`
	}
	jsonSpan struct {
		TraceID      string   `json:"traceId"`
		SpanID       string   `json:"spanId"`
		ParentSpanID string   `json:"parentSpanId"`
		Name         string   `json:"name"`
		Kind         int      `json:"kind"`
		Start        string   `json:"startTimeUnixNano"`
		End          string   `json:"endTimeUnixNano"`
		Attributes   []jsonKV `json:"attributes"`
		Status       struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"status"`
	}
	jsonTraces struct {
		ResourceSpans []struct {
			Resource struct {
				Attributes []jsonKV `json:"attributes"`
			} `json:"resource"`
			ScopeSpans []struct {
				Spans []jsonSpan `json:"spans"`
			} `json:"scopeSpans"`
		} `json:"resourceSpans"`
	}
	jsonHistogramPoint struct {
		Attributes   []jsonKV `json:"attributes"`
		Count        string   `json:"count"`
		Sum          float64  `json:"sum"`
		BucketCounts []string `json:"bucketCounts"`
	}
	jsonMetric struct {
		Name      string `json:"name"`
		Histogram *struct {
			DataPoints  []jsonHistogramPoint `json:"dataPoints"`
			Temporality int                  `json:"aggregationTemporality"`
		} `json:"histogram"`
	}
	jsonMetrics struct {
		ResourceMetrics []struct {
			ScopeMetrics []struct {
				Metrics []jsonMetric `json:"metrics"`
			} `json:"scopeMetrics"`
		} `json:"resourceMetrics"`
	}
)

var (
	traceIDRE = regexp.MustCompile(`^[0-9a-f]{32}$`)
	spanIDRE  = regexp.MustCompile(`^[0-9a-f]{16}$`)
)

// attr is the value of a span's attribute key: its one field, as sent.
func (s jsonSpan) attr(key string) any {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			for _, v := range kv.Value {
				return v
			}
		}
	}
	return nil
}

// otlpReceiver is an in-process OTLP/HTTP collector taking the JSON
// encoding: what mcpcall exported.
type otlpReceiver struct {
	mu      sync.Mutex
	spans   []jsonSpan
	service []string // service.name of each batch of spans
	metrics []jsonMetric
	bad     []string // what broke the OTLP/JSON rules
	auth    []string // the Authorization header of each request
	gzipped int      // requests with a gzip body
	got     chan struct{}
}

func newOTLPReceiver() *otlpReceiver { return &otlpReceiver{got: make(chan struct{}, 64)} }

func (o *otlpReceiver) addTraces(req *jsonTraces) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, kv := range rs.Resource.Attributes {
			if kv.Key == "service.name" {
				o.service = append(o.service, kv.Value["stringValue"].(string))
			}
		}
		for _, ss := range rs.ScopeSpans {
			for _, sp := range ss.Spans {
				if !traceIDRE.MatchString(sp.TraceID) || !spanIDRE.MatchString(sp.SpanID) || (sp.ParentSpanID != "" && !spanIDRE.MatchString(sp.ParentSpanID)) {
					o.bad = append(o.bad, "ids not hex: "+sp.TraceID+" "+sp.SpanID+" "+sp.ParentSpanID)
				}
				if _, err := strconv.ParseUint(sp.Start, 10, 64); err != nil {
					o.bad = append(o.bad, "startTimeUnixNano not a decimal string: "+sp.Start)
				}
				o.spans = append(o.spans, sp)
			}
		}
	}
}

func (o *otlpReceiver) addMetrics(req *jsonMetrics) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, rm := range req.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			o.metrics = append(o.metrics, sm.Metrics...)
		}
	}
}

// ServeHTTP is OTLP/HTTP with JSON: a body of another type is refused, as
// a receiver that takes JSON only would.
func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		http.Error(w, "content type "+ct, http.StatusUnsupportedMediaType)
		return
	}
	var in io.Reader = r.Body
	o.mu.Lock()
	o.auth = append(o.auth, r.Header.Get("Authorization"))
	if r.Header.Get("Content-Encoding") == "gzip" {
		o.gzipped++
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			o.mu.Unlock()
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		in = zr
	}
	o.mu.Unlock()
	body, err := io.ReadAll(io.LimitReader(in, 8<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	dec := func(v any) bool {
		if err := json.Unmarshal(body, v); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return false
		}
		return true
	}
	switch r.URL.Path {
	case "/v1/traces":
		var req jsonTraces
		if !dec(&req) {
			return
		}
		o.addTraces(&req)
	case "/v1/metrics":
		var req jsonMetrics
		if !dec(&req) {
			return
		}
		o.addMetrics(&req)
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte("{}"))
}

// span returns the one span named name.
func (o *otlpReceiver) span(t *testing.T, name string) jsonSpan {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	var found []jsonSpan
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
// the call's CLIENT span under it with its attributes, the trace context
// the server got, the metrics' points, and the service name.
func (o *otlpReceiver) checkExport(t *testing.T, srv *testservers.Server, serverURL, callSpan string, wantError bool) {
	t.Helper()
	root := o.span(t, "mcpcall tools call")
	call := o.span(t, callSpan)
	if call.ParentSpanID != root.SpanID || call.TraceID != root.TraceID {
		t.Errorf("the call's span (trace %s, parent %s) is not the run's child (trace %s, span %s)", call.TraceID, call.ParentSpanID, root.TraceID, root.SpanID)
	}
	if call.Kind != 3 { // SPAN_KIND_CLIENT
		t.Errorf("the call's span kind %d, want 3 (client)", call.Kind)
	}
	if got := call.attr("mcp.method.name"); got != "tools/call" {
		t.Errorf("the call's mcp.method.name %v, want tools/call", got)
	}
	if u, err := url.Parse(serverURL); err == nil {
		if got := call.attr("server.port"); got != u.Port() { // an int64: a decimal string
			t.Errorf("the call's server.port %#v, want the string %q", got, u.Port())
		}
	}
	if wantError != (root.Status.Code == 2) { // STATUS_CODE_ERROR
		t.Errorf("the run's span status %+v; want error: %v", root.Status, wantError)
	}
	if srv != nil {
		found := false
		for _, tc := range srv.TraceContexts() {
			if tc.Method == "tools/call" && tc.TraceID == call.TraceID && tc.ParentID == call.SpanID {
				found = true
			}
		}
		if !found {
			t.Errorf("the server received %+v, not the call's span as parent", srv.TraceContexts())
		}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, bad := range o.bad {
		t.Errorf("OTLP/JSON rule broken: %s", bad)
	}
	for _, name := range []string{"mcp.client.operation.duration", "mcp.client.session.duration"} {
		points := 0
		for _, m := range o.metrics {
			if m.Name != name || m.Histogram == nil {
				continue
			}
			if m.Histogram.Temporality != 2 { // AGGREGATION_TEMPORALITY_CUMULATIVE
				t.Errorf("%s: temporality %d, want 2 (cumulative)", name, m.Histogram.Temporality)
			}
			for _, p := range m.Histogram.DataPoints {
				n, err := strconv.ParseUint(p.Count, 10, 64)
				if err != nil || n == 0 || p.Sum <= 0 || len(p.BucketCounts) == 0 {
					t.Errorf("%s: point count %q, sum %v, %d buckets", name, p.Count, p.Sum, len(p.BucketCounts))
				}
				points++
			}
		}
		if points == 0 {
			t.Errorf("metric %s not exported as a histogram with points; got %+v", name, o.metrics)
		}
	}
	if len(o.service) == 0 {
		t.Errorf("no resource with a service.name")
	}
	for _, s := range o.service {
		if s != "mcpcall-test" {
			t.Errorf("service.name %q, want OTEL_SERVICE_NAME's", s)
		}
	}
}

// TestOTLPExport: with OTEL_EXPORTER_OTLP_ENDPOINT set, mcpcall exports
// the run's span, the request's spans and the MCP metrics over OTLP/HTTP
// with JSON, flushed before it exits; the server receives the call's
// trace context. OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf, set by many
// environments, is sent as http/json too.
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
	r.env["OTEL_EXPORTER_OTLP_HEADERS"] = "Authorization=Bearer%20otlp-s3cret,x-team=a"
	r.env["OTEL_EXPORTER_OTLP_COMPRESSION"] = "gzip"
	res := r.runOK("tools", "call", "echo", "text=hi", "--verbose", srv.URL)
	recv.checkExport(t, srv.Server(), srv.URL, "tools/call echo", false)
	recv.mu.Lock()
	defer recv.mu.Unlock()
	for _, a := range recv.auth {
		if a != "Bearer otlp-s3cret" {
			t.Errorf("the collector got Authorization %q, want OTEL_EXPORTER_OTLP_HEADERS's, decoded", a)
		}
	}
	if recv.gzipped != len(recv.auth) || recv.gzipped == 0 {
		t.Errorf("%d of %d requests gzipped; OTEL_EXPORTER_OTLP_COMPRESSION=gzip", recv.gzipped, len(recv.auth))
	}
	if strings.Contains(res.stderr, "s3cret") {
		t.Errorf("stderr shows the OTLP header's value: %s", res.stderr)
	}
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
	recv.checkExport(t, srv.Server(), srv.URL, "tools/call echo", false)
	root := recv.span(t, "mcpcall tools call")
	if root.TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" || root.ParentSpanID != "00f067aa0ba902b7" {
		t.Errorf("the run's span: trace %s, parent %s; want TRACEPARENT's", root.TraceID, root.ParentSpanID)
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
			recv.checkExport(t, nil, srv.URL, "tools/call "+tc.args[2], true)
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
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, traces: true, metric: true, proto: "http/json"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, traces: true, proto: "http/json"},
		{env: map[string]string{"OTEL_METRICS_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, err: true},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc"}, err: true},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_METRICS_EXPORTER": "none"}, traces: true, proto: "http/json"},
		{env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_SDK_DISABLED": "true"}},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, err: true},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, traces: true, proto: "http/json"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, traces: true, proto: "http/json"},
		{env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/xml"}, err: true},
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
	r.env["OTEL_EXPORTER_OTLP_PROTOCOL"] = "grpc"
	res := r.runOK("tools", "call", "echo", "text=hi", srv.URL)
	for _, want := range []string{"not exporting traces", "zipkin", "not exporting metrics", "grpc", "http/json"} {
		if !strings.Contains(res.stderr, want) {
			t.Errorf("stderr %q does not say %q", res.stderr, want)
		}
	}
	if n := len(srv.Server().TraceContexts()); n != 0 {
		t.Errorf("the server received %d trace contexts from a run that exports nothing", n)
	}
}

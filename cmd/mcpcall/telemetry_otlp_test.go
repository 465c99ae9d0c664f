package main

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// TestOTLPSettings: the OTEL_EXPORTER_OTLP_* variables a signal reads, the
// signal's own before the general one; errors name the variable and never
// a header's value.
func TestOTLPSettings(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		url     string
		headers map[string]string
		timeout time.Duration
		gzip    bool
		err     string // a part of the error; "" for none
	}{
		{name: "defaults", url: "http://localhost:4318/v1/traces", timeout: otlpDefaultTimeout},
		{name: "general", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://c:4318/", "OTEL_EXPORTER_OTLP_HEADERS": "api-key=a%2Cb%20c, x-team = t ",
			"OTEL_EXPORTER_OTLP_TIMEOUT": "250", "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"},
			url: "https://c:4318/v1/traces", headers: map[string]string{"Api-Key": "a,b c", "X-Team": "t"}, timeout: 250 * time.Millisecond, gzip: true},
		{name: "own-first", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t/x",
			"OTEL_EXPORTER_OTLP_HEADERS": "a=1", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "b=2", "OTEL_EXPORTER_OTLP_TIMEOUT": "x", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "5",
			"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "none"},
			url: "http://t/x", headers: map[string]string{"B": "2"}, timeout: 5 * time.Millisecond},
		{name: "no-scheme", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "collector:4318"}, err: "not an http:// or https:// URL"},
		{name: "bad-header", env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "api-key=s3cret,oops"}, err: "OTEL_EXPORTER_OTLP_HEADERS: entry 2"},
		{name: "bad-escape", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "api-key=s3cret%zz"}, err: "OTEL_EXPORTER_OTLP_TRACES_HEADERS: the value of api-key"},
		{name: "bad-name", env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "a b=s3cret"}, err: "entry 1"},
		{name: "bad-timeout", env: map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "-1"}, err: "OTEL_EXPORTER_OTLP_TIMEOUT"},
		{name: "bad-compression", env: map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"}, err: "gzip or none"},
		{name: "bad-ca", env: map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": ca}, err: "no PEM certificate"},
		{name: "cert-without-key", env: map[string]string{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": ca}, err: "go together"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := otlpSettings(func(k string) string { return tc.env[k] }, "traces")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("the error shows a header's value: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.url != tc.url || cfg.timeout != tc.timeout || cfg.gzip != tc.gzip || len(cfg.headers) != len(tc.headers) {
				t.Errorf("got %s, %v, gzip %v, %d headers; want %s, %v, %v, %d", cfg.url, cfg.timeout, cfg.gzip, len(cfg.headers), tc.url, tc.timeout, tc.gzip, len(tc.headers))
			}
			for k, v := range tc.headers {
				if got := cfg.headers.Get(k); got != v {
					t.Errorf("header %s %q, want %q", k, got, v)
				}
			}
		})
	}
}

// collector answers each request with the next of its answers (the last
// one again when they run out) and keeps the bodies.
type collector struct {
	mu      sync.Mutex
	answers []int
	bodies  [][]byte
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.bodies = append(c.bodies, body)
	code := c.answers[min(len(c.bodies), len(c.answers))-1]
	c.mu.Unlock()
	if code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "0")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	if code >= 400 {
		w.Write([]byte(`{"code":3,"message":"no \u001b[31mthanks"}`))
		return
	}
	w.Write([]byte(`{}`))
}

func (c *collector) requests() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.bodies)
}

func testSender(t *testing.T, url string, timeout time.Duration) *otlpSender {
	s := newOTLPSender(otlpConfig{signal: "traces", url: url, timeout: timeout, headers: http.Header{"Api-Key": {"s3cret"}}})
	t.Cleanup(s.client.CloseIdleConnections)
	return s
}

// TestOTLPSendRetries: 503 (and 429, 502, 504) are retried; 400 and 413
// are not, and a 400 says what mcpcall sent.
func TestOTLPSendRetries(t *testing.T) {
	for _, tc := range []struct {
		answers  []int
		requests int
		err      string
	}{
		{[]int{503, 503, 200}, 3, ""},
		{[]int{429, 200}, 2, ""},
		{[]int{400}, 1, `400 Bad Request: "no \x1b[31mthanks" (mcpcall sends OTLP as http/json)`},
		{[]int{413}, 1, "413"},
		{[]int{307}, 1, "307"},
	} {
		c := &collector{answers: tc.answers}
		hs := httptest.NewServer(c)
		err := testSender(t, hs.URL, 10*time.Second).send(context.Background(), []byte(`{}`))
		hs.Close()
		if (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%v: error %v, want %q", tc.answers, err, tc.err)
		}
		if c.requests() != tc.requests {
			t.Errorf("%v: %d requests, want %d", tc.answers, c.requests(), tc.requests)
		}
	}
}

// TestOTLPSendNoRedirect: a redirect is not followed: the headers, often
// an API key, go only to the endpoint the user named.
func TestOTLPSendNoRedirect(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	hs := httptest.NewServer(http.RedirectHandler(other.URL+"/v1/traces", http.StatusTemporaryRedirect))
	defer hs.Close()
	if err := testSender(t, hs.URL, 5*time.Second).send(context.Background(), []byte(`{}`)); err == nil {
		t.Errorf("a redirect counted as an export")
	}
	if n := elsewhere.Load(); n != 0 {
		t.Errorf("the redirect's target got %d requests", n)
	}
}

// TestOTLPSendTimeout: the timeout bounds an export that gets no answer,
// its retries included.
func TestOTLPSendTimeout(t *testing.T) {
	release := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hs.Close()
	defer close(release)
	start := time.Now()
	err := testSender(t, hs.URL, 200*time.Millisecond).send(context.Background(), []byte(`{}`))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want the deadline", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v with a 200 ms timeout", took)
	}
}

// TestOTLPSpanBatchCap: a batch over the body cap is split into requests
// under it; a span alone over it is dropped with an error, not sent.
func TestOTLPSpanBatchCap(t *testing.T) {
	c := &collector{answers: []int{200}}
	hs := httptest.NewServer(c)
	defer hs.Close()
	const limit = 64 << 10 // otlpMaxBody's part, smaller: the same code, less to encode
	exp := &otlpSpanExporter{s: testSender(t, hs.URL, 10*time.Second), maxBody: limit}
	big := strings.Repeat("x", 1<<10)
	var spans []sdktrace.ReadOnlySpan
	for range 600 { // 600 spans of over 1 KiB: over the 512-span and the body caps
		spans = append(spans, stubSpan(attribute.String("big", big)).Snapshot())
	}
	if err := exp.ExportSpans(context.Background(), spans); err != nil {
		t.Fatal(err)
	}
	got := 0
	for _, b := range c.bodies {
		if len(b) > limit {
			t.Errorf("a request of %d bytes, over the cap", len(b))
		}
		got += strings.Count(string(b), `"spanId"`)
	}
	if got != len(spans) || len(c.bodies) < 2 {
		t.Errorf("%d spans in %d requests, want %d in several", got, len(c.bodies), len(spans))
	}
	before := c.requests()
	huge := stubSpan(attribute.String("huge", strings.Repeat("x", limit))).Snapshot()
	if err := exp.ExportSpans(context.Background(), []sdktrace.ReadOnlySpan{huge}); err == nil || !strings.Contains(err.Error(), "over the") {
		t.Errorf("a span over the cap: error %v", err)
	}
	if c.requests() != before {
		t.Errorf("a span over the cap was sent")
	}
	exp.Shutdown(context.Background())
	if err := exp.ExportSpans(context.Background(), spans[:1]); err != nil || c.requests() != before {
		t.Errorf("an export after Shutdown: %v, %d requests", err, c.requests()-before)
	}
}

// TestOTLPMetricPreferences: the temporality preference and the default
// histogram aggregation.
func TestOTLPMetricPreferences(t *testing.T) {
	for _, tc := range []struct {
		pref, agg        string
		counter, updown  metricdata.Temporality
		exponential, err bool
	}{
		{"", "", metricdata.CumulativeTemporality, metricdata.CumulativeTemporality, false, false},
		{"delta", "base2_exponential_bucket_histogram", metricdata.DeltaTemporality, metricdata.CumulativeTemporality, true, false},
		{"LowMemory", "explicit_bucket_histogram", metricdata.DeltaTemporality, metricdata.CumulativeTemporality, false, false},
		{"sometimes", "", 0, 0, false, true},
		{"", "tdigest", 0, 0, false, true},
	} {
		env := map[string]string{"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE": tc.pref, "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION": tc.agg}
		ts, as, err := metricSelectors(func(k string) string { return env[k] })
		if (err != nil) != tc.err {
			t.Errorf("%v: error %v", env, err)
			continue
		}
		if tc.err {
			continue
		}
		if ts(sdkmetric.InstrumentKindCounter) != tc.counter || ts(sdkmetric.InstrumentKindUpDownCounter) != tc.updown {
			t.Errorf("%v: counter %v, up-down %v", env, ts(sdkmetric.InstrumentKindCounter), ts(sdkmetric.InstrumentKindUpDownCounter))
		}
		_, exp := as(sdkmetric.InstrumentKindHistogram).(sdkmetric.AggregationBase2ExponentialHistogram)
		if exp != tc.exponential {
			t.Errorf("%v: histogram aggregation %T", env, as(sdkmetric.InstrumentKindHistogram))
		}
	}
}

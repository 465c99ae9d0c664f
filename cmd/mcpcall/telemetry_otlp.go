package main

// mcpcall's own OTLP exporters: OTLP over HTTP with the JSON encoding
// (telemetry_json.go), for spans and metrics.
//
// Why not the OpenTelemetry exporters: a newcomer's first command is a cold
// `go run ./cmd/mcpcall demo`. With otlptracehttp and otlpmetrichttp it
// compiled protobuf, the OTLP protos, grpc-gateway, genproto and gRPC:
// 461 packages, 138 s of CPU time cold on this 2-core machine. With these
// exporters it is 308 packages and 109 s (docs/benchmarks.md). JSON is a
// protocol the OTLP specification gives every OTLP/HTTP receiver, on the
// port it takes protobuf on; the standard library encodes it.

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

const (
	// otlpMaxBody caps one request's body before compression; a batch
	// over it is split. The OTLP specification recommends receivers take
	// up to 20 MiB.
	otlpMaxBody = 4 << 20
	// otlpMaxSpans caps the spans of one request.
	otlpMaxSpans = 512
	// otlpMaxResponse caps what is read of a collector's answer.
	otlpMaxResponse = 64 << 10
	// otlpDefaultTimeout bounds one export, its retries included, when
	// OTEL_EXPORTER_OTLP_TIMEOUT does not say.
	otlpDefaultTimeout = 10 * time.Second
)

// otlpConfig is how one signal ("traces", "metrics") is sent.
type otlpConfig struct {
	signal  string
	url     string
	headers http.Header
	timeout time.Duration
	gzip    bool
	tls     *tls.Config // nil: the system's roots, no client certificate
}

// otlpSetting is a signal's own variable (OTEL_EXPORTER_OTLP_TRACES_X),
// else the general one (OTEL_EXPORTER_OTLP_X), and the name it came from.
func otlpSetting(getenv func(string) string, signal, name string) (value, from string) {
	own := "OTEL_EXPORTER_OTLP_" + strings.ToUpper(signal) + "_" + name
	if v := getenv(own); v != "" {
		return v, own
	}
	return getenv("OTEL_EXPORTER_OTLP_" + name), "OTEL_EXPORTER_OTLP_" + name
}

// otlpSettings reads a signal's OTEL_EXPORTER_OTLP_* variables. Errors
// name the variable, never a header's value.
func otlpSettings(getenv func(string) string, signal string) (otlpConfig, error) {
	c := otlpConfig{signal: signal, url: otlpEndpoint(getenv, strings.ToUpper(signal)), timeout: otlpDefaultTimeout}
	if c.url == "" {
		c.url = "http://localhost:4318/v1/" + signal
	}
	if u, err := url.Parse(c.url); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, fmt.Errorf("the OTLP %s endpoint is not an http:// or https:// URL", signal)
	}
	var err error
	if v, from := otlpSetting(getenv, signal, "HEADERS"); v != "" {
		if c.headers, err = parseOTLPHeaders(v); err != nil {
			return c, fmt.Errorf("%s: %w", from, err)
		}
	}
	if v, from := otlpSetting(getenv, signal, "TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || ms <= 0 {
			return c, fmt.Errorf("%s=%q: want a positive number of milliseconds", from, v)
		}
		c.timeout = time.Duration(ms) * time.Millisecond
	}
	switch v, from := otlpSetting(getenv, signal, "COMPRESSION"); strings.ToLower(strings.TrimSpace(v)) {
	case "", "none":
	case "gzip":
		c.gzip = true
	default:
		return c, fmt.Errorf("%s=%q: mcpcall compresses with gzip or none", from, v)
	}
	c.tls, err = otlpTLS(getenv, signal)
	return c, err
}

// parseOTLPHeaders reads "key1=value1,key2=value2", values percent-encoded.
func parseOTLPHeaders(s string) (http.Header, error) {
	h := http.Header{}
	for i, entry := range strings.Split(s, ",") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		k, v, ok := strings.Cut(entry, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" || !isHeaderToken(k) {
			return nil, fmt.Errorf("entry %d is not key=value with a header name as key", i+1)
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil || strings.ContainsAny(dv, "\r\n\x00") {
			return nil, fmt.Errorf("the value of %s is not percent-encoded right", k)
		}
		h.Add(k, dv)
	}
	return h, nil
}

func isHeaderToken(s string) bool {
	for _, r := range s {
		if r > 0x7e || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}

// otlpTLS reads the CA certificate and the client certificate and key.
func otlpTLS(getenv func(string) string, signal string) (*tls.Config, error) {
	ca, caFrom := otlpSetting(getenv, signal, "CERTIFICATE")
	cert, certFrom := otlpSetting(getenv, signal, "CLIENT_CERTIFICATE")
	key, keyFrom := otlpSetting(getenv, signal, "CLIENT_KEY")
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", caFrom, err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: %s holds no PEM certificate", caFrom, ca)
		}
	}
	if (cert == "") != (key == "") {
		return nil, fmt.Errorf("%s and %s go together", certFrom, keyFrom)
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%s, %s: %w", certFrom, keyFrom, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// otlpSender posts OTLP/JSON bodies to one endpoint.
type otlpSender struct {
	cfg    otlpConfig
	client *http.Client
}

func newOTLPSender(cfg otlpConfig) *otlpSender {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.tls != nil {
		tr.TLSClientConfig = cfg.tls
	}
	return &otlpSender{cfg: cfg, client: &http.Client{
		Transport: tr,
		// The headers often carry an API key: they go to the endpoint the
		// user named and nowhere a redirect points.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// errOTLPPermanent marks an answer that retrying will not change.
var errOTLPPermanent = errors.New("not retried")

// send posts msg, retrying what the OTLP specification says to retry (429,
// 502, 503, 504, no answer) with backoff, within the configured timeout.
func (s *otlpSender) send(ctx context.Context, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.timeout)
	defer cancel()
	if s.cfg.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(body)
		zw.Close()
		body = buf.Bytes()
	}
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		wait, err := s.post(ctx, body)
		if err == nil || errors.Is(err, errOTLPPermanent) {
			return err
		}
		if wait == 0 {
			wait = backoff/2 + rand.N(backoff/2+1)
			backoff = min(2*backoff, 5*time.Second)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return fmt.Errorf("%w (attempt %d; no time left to retry)", err, attempt)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (attempt %d)", err, attempt)
		case <-t.C:
		}
	}
}

// post makes one attempt; a retryable failure may say how long to wait.
func (s *otlpSender) post(ctx context.Context, body []byte) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.cfg.url, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("OTLP %s export: %w: %w", s.cfg.signal, err, errOTLPPermanent)
	}
	for k, vs := range s.cfg.headers {
		req.Header[k] = vs
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "mcpcall/"+moduleVersion()+" (OTLP/HTTP JSON)")
	if s.cfg.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("OTLP %s export: %w", s.cfg.signal, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, otlpMaxResponse))
	switch code := resp.StatusCode; {
	case code >= 200 && code < 300:
		return 0, partialSuccess(s.cfg.signal, answer)
	case code == http.StatusTooManyRequests || code == http.StatusBadGateway || code == http.StatusServiceUnavailable || code == http.StatusGatewayTimeout:
		wait := time.Duration(0)
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs >= 0 {
			wait = time.Duration(secs) * time.Second
		}
		return wait, fmt.Errorf("OTLP %s export: the collector answered %s%s", s.cfg.signal, resp.Status, statusMessage(answer))
	default:
		hint := ""
		if code == http.StatusUnsupportedMediaType || code == http.StatusBadRequest {
			hint = " (mcpcall sends OTLP as http/json)"
		}
		return 0, fmt.Errorf("OTLP %s export: the collector answered %s%s%s: %w", s.cfg.signal, resp.Status, statusMessage(answer), hint, errOTLPPermanent)
	}
}

// statusMessage is the message of a failure's Status body, short and
// quoted (the collector is a peer: its text is not trusted to be tidy).
func statusMessage(body []byte) string {
	var st struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &st) != nil || st.Message == "" {
		return ""
	}
	if len(st.Message) > 200 {
		st.Message = st.Message[:200] + "…"
	}
	return ": " + strconv.Quote(st.Message)
}

// partialSuccess reports the data a collector took the request for yet
// rejected, or a warning it gave (the response's partialSuccess).
func partialSuccess(signal string, body []byte) error {
	var resp struct {
		PartialSuccess struct {
			RejectedSpans      json.RawMessage `json:"rejectedSpans"`
			RejectedDataPoints json.RawMessage `json:"rejectedDataPoints"`
			ErrorMessage       string          `json:"errorMessage"`
		} `json:"partialSuccess"`
	}
	if json.Unmarshal(body, &resp) != nil { // a binary or empty answer: the 2xx says enough
		return nil
	}
	ps := resp.PartialSuccess
	// int64 fields: a decimal string, or a number from a lenient encoder.
	count := func(raw json.RawMessage) int64 {
		n, _ := strconv.ParseInt(strings.Trim(string(raw), `"`), 10, 64)
		return n
	}
	n := count(ps.RejectedSpans) + count(ps.RejectedDataPoints)
	if n == 0 && ps.ErrorMessage == "" {
		return nil
	}
	msg, _ := json.Marshal(map[string]string{"message": ps.ErrorMessage})
	return fmt.Errorf("OTLP %s export: the collector rejected %d of them%s: %w", signal, n, statusMessage(msg), errOTLPPermanent)
}

// otlpSpanExporter is an sdktrace.SpanExporter.
type otlpSpanExporter struct {
	s       *otlpSender
	maxBody int // 0: otlpMaxBody
	mu      sync.Mutex
	stopped bool
}

func (e *otlpSpanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	stopped := e.stopped
	e.mu.Unlock()
	if stopped {
		return nil
	}
	var errs []error
	for len(spans) > 0 {
		n := min(len(spans), otlpMaxSpans)
		errs = append(errs, e.exportChunk(ctx, spans[:n]))
		spans = spans[n:]
	}
	return errors.Join(errs...)
}

// exportChunk sends spans in one request, or halves them until each
// request is under otlpMaxBody.
func (e *otlpSpanExporter) exportChunk(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	body, err := json.Marshal(tracesRequest(spans))
	if err != nil {
		return fmt.Errorf("OTLP traces export: encoding: %w", err)
	}
	limit := cmp.Or(e.maxBody, otlpMaxBody)
	if len(body) > limit {
		if len(spans) == 1 {
			return fmt.Errorf("OTLP traces export: span %q is %d bytes, over the %d-byte request cap: dropped", spans[0].Name(), len(body), limit)
		}
		half := len(spans) / 2
		return errors.Join(e.exportChunk(ctx, spans[:half]), e.exportChunk(ctx, spans[half:]))
	}
	return e.s.send(ctx, body)
}

func (e *otlpSpanExporter) Shutdown(context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.stopped {
		e.stopped = true
		e.s.client.CloseIdleConnections()
	}
	return nil
}

// otlpMetricExporter is an sdkmetric.Exporter.
type otlpMetricExporter struct {
	s           *otlpSender
	temporality sdkmetric.TemporalitySelector
	aggregation sdkmetric.AggregationSelector
	mu          sync.Mutex
	stopped     bool
}

// metricSelectors reads OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE
// and OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION.
func metricSelectors(getenv func(string) string) (sdkmetric.TemporalitySelector, sdkmetric.AggregationSelector, error) {
	const tv, av = "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION"
	var ts sdkmetric.TemporalitySelector
	switch v := getenv(tv); strings.ToLower(strings.TrimSpace(v)) {
	case "", "cumulative":
		ts = sdkmetric.DefaultTemporalitySelector
	case "delta":
		ts = func(k sdkmetric.InstrumentKind) metricdata.Temporality {
			switch k {
			case sdkmetric.InstrumentKindUpDownCounter, sdkmetric.InstrumentKindObservableUpDownCounter:
				return metricdata.CumulativeTemporality
			}
			return metricdata.DeltaTemporality
		}
	case "lowmemory":
		ts = func(k sdkmetric.InstrumentKind) metricdata.Temporality {
			switch k {
			case sdkmetric.InstrumentKindCounter, sdkmetric.InstrumentKindHistogram:
				return metricdata.DeltaTemporality
			}
			return metricdata.CumulativeTemporality
		}
	default:
		return nil, nil, fmt.Errorf("%s=%q: want cumulative, delta or lowmemory", tv, v)
	}
	as := sdkmetric.DefaultAggregationSelector
	switch v := getenv(av); strings.ToLower(strings.TrimSpace(v)) {
	case "", "explicit_bucket_histogram":
	case "base2_exponential_bucket_histogram":
		as = func(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
			if k == sdkmetric.InstrumentKindHistogram {
				return sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 20}
			}
			return sdkmetric.DefaultAggregationSelector(k)
		}
	default:
		return nil, nil, fmt.Errorf("%s=%q: want explicit_bucket_histogram or base2_exponential_bucket_histogram", av, v)
	}
	return ts, as, nil
}

func (e *otlpMetricExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return e.temporality(k)
}

func (e *otlpMetricExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return e.aggregation(k)
}

func (e *otlpMetricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	e.mu.Lock()
	stopped := e.stopped
	e.mu.Unlock()
	if stopped {
		return nil
	}
	body, err := json.Marshal(metricsRequest(rm))
	if err != nil {
		return fmt.Errorf("OTLP metrics export: encoding: %w", err)
	}
	if len(body) > otlpMaxBody {
		return fmt.Errorf("OTLP metrics export: %d bytes, over the %d-byte request cap: dropped", len(body), otlpMaxBody)
	}
	return e.s.send(ctx, body)
}

func (e *otlpMetricExporter) ForceFlush(context.Context) error { return nil }

func (e *otlpMetricExporter) Shutdown(context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.stopped {
		e.stopped = true
		e.s.client.CloseIdleConnections()
	}
	return nil
}

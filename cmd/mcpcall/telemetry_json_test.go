package main

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// The OTLP specification's rules for JSON, checked on any encoded
// message: keys in lowerCamelCase; trace and span ids hex of 32 and 16
// digits; 64-bit integers (the *UnixNano times, intValue, asInt, count,
// zeroCount, bucketCounts) as decimal strings; enums (kind, code,
// aggregationTemporality) as integers.
var (
	lowerCamel   = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)
	decimal      = regexp.MustCompile(`^-?[0-9]+$`)
	int64Keys    = map[string]bool{"intValue": true, "asInt": true, "count": true, "zeroCount": true, "bucketCounts": true}
	enumKeys     = map[string]bool{"kind": true, "code": true, "aggregationTemporality": true}
	idDigits     = map[string]int{"traceId": 32, "spanId": 16, "parentSpanId": 16}
	hexLowerOnly = regexp.MustCompile(`^[0-9a-f]*$`)
)

func checkOTLPJSON(t *testing.T, body []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, body)
	}
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if !lowerCamel.MatchString(k) {
					t.Errorf("key %q is not lowerCamelCase", k)
				}
				walk(k, e)
			}
			return
		case []any:
			for _, e := range v {
				walk(key, e)
			}
			return
		}
		switch {
		case strings.HasSuffix(key, "UnixNano") || int64Keys[key]:
			if s, ok := v.(string); !ok || !decimal.MatchString(s) {
				t.Errorf("%s: %#v, want a decimal string", key, v)
			}
		case enumKeys[key]:
			if f, ok := v.(float64); !ok || f != math.Trunc(f) {
				t.Errorf("%s: %#v, want an integer", key, v)
			}
		case idDigits[key] > 0:
			if s, ok := v.(string); !ok || len(s) != idDigits[key] || !hexLowerOnly.MatchString(s) {
				t.Errorf("%s: %#v, want %d hex digits", key, v, idDigits[key])
			}
		}
	}
	walk("", v)
}

var (
	testTraceID = trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	testSpanID  = trace.SpanID{0, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
	testParent  = trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8}
	testStart   = time.Unix(1700000000, 1)
)

func stubSpan(attrs ...attribute.KeyValue) tracetest.SpanStub {
	return tracetest.SpanStub{
		Name:                 "tools/call echo",
		SpanContext:          trace.NewSpanContext(trace.SpanContextConfig{TraceID: testTraceID, SpanID: testSpanID, TraceFlags: trace.FlagsSampled}),
		Parent:               trace.NewSpanContext(trace.SpanContextConfig{TraceID: testTraceID, SpanID: testParent, Remote: true}),
		SpanKind:             trace.SpanKindClient,
		StartTime:            testStart,
		EndTime:              testStart.Add(time.Second),
		Attributes:           attrs,
		Resource:             resource.NewSchemaless(attribute.String("service.name", "t")),
		InstrumentationScope: instrumentation.Scope{Name: "s"},
	}
}

// TestOTLPJSONSpan: a span's fields as the specification writes them.
func TestOTLPJSONSpan(t *testing.T) {
	s := stubSpan(attribute.Int64("neg", -5), attribute.Int64("max", math.MaxInt64), attribute.Float64("nan", math.NaN()),
		attribute.Float64("inf", math.Inf(-1)), attribute.Float64("half", 0.5), attribute.Bool("b", true),
		attribute.StringSlice("ss", []string{"a", "b"}), attribute.Int64Slice("is", []int64{7}), attribute.ByteSlice("by", []byte{1, 2}),
		attribute.Map("m", attribute.Int("k", 1)))
	s.Status = sdktrace.Status{Code: codes.Error, Description: "boom"}
	s.Events = []sdktrace.Event{{Name: "retry", Time: testStart.Add(2)}}
	body, err := json.Marshal(tracesRequest([]sdktrace.ReadOnlySpan{s.Snapshot()}))
	if err != nil {
		t.Fatal(err)
	}
	checkOTLPJSON(t, body)
	for _, want := range []string{
		`"traceId":"4bf92f3577b34da6a3ce929d0e0e4736"`,
		`"spanId":"00f067aa0ba902b7"`,
		`"parentSpanId":"0102030405060708"`,
		`"flags":769`, // sampled, and the parent is known to be remote: 0x1|0x100|0x200
		`"kind":3`,
		`"startTimeUnixNano":"1700000000000000001"`,
		`"endTimeUnixNano":"1700000001000000001"`,
		`"timeUnixNano":"1700000000000000003"`,
		`{"key":"neg","value":{"intValue":"-5"}}`,
		`{"key":"max","value":{"intValue":"9223372036854775807"}}`,
		`{"key":"nan","value":{"doubleValue":"NaN"}}`,
		`{"key":"inf","value":{"doubleValue":"-Infinity"}}`,
		`{"key":"half","value":{"doubleValue":0.5}}`,
		`{"key":"b","value":{"boolValue":true}}`,
		`{"key":"ss","value":{"arrayValue":{"values":[{"stringValue":"a"},{"stringValue":"b"}]}}}`,
		`{"key":"is","value":{"arrayValue":{"values":[{"intValue":"7"}]}}}`,
		`{"key":"by","value":{"bytesValue":"AQI="}}`, // bytes: base64, as proto3 JSON has them
		`{"key":"m","value":{"kvlistValue":{"values":[{"key":"k","value":{"intValue":"1"}}]}}}`,
		`"status":{"message":"boom","code":2}`,
		`"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"t"}}]}`,
		`"scope":{"name":"s"}`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("no %s in\n%s", want, body)
		}
	}
	// Go's codes.Ok is 2, OTLP's STATUS_CODE_OK is 1.
	s.Status = sdktrace.Status{Code: codes.Ok}
	body, _ = json.Marshal(tracesRequest([]sdktrace.ReadOnlySpan{s.Snapshot()}))
	if !strings.Contains(string(body), `"status":{"code":1}`) {
		t.Errorf("an OK status: %s", body)
	}
}

// TestOTLPJSONMetrics: each aggregation, its points and temporality.
func TestOTLPJSONMetrics(t *testing.T) {
	attrs := attribute.NewSet(attribute.String("mcp.method.name", "tools/call"))
	rm := &metricdata.ResourceMetrics{
		Resource: resource.NewSchemaless(attribute.String("service.name", "t")),
		ScopeMetrics: []metricdata.ScopeMetrics{{Scope: instrumentation.Scope{Name: "s", Version: "1"}, Metrics: []metricdata.Metrics{
			{Name: "sum", Unit: "1", Data: metricdata.Sum[int64]{Temporality: metricdata.CumulativeTemporality, IsMonotonic: true,
				DataPoints: []metricdata.DataPoint[int64]{{Attributes: attrs, StartTime: testStart, Time: testStart.Add(1), Value: 42}}}},
			{Name: "gauge", Data: metricdata.Gauge[float64]{DataPoints: []metricdata.DataPoint[float64]{{Time: testStart, Value: 1.5}}}},
			{Name: "hist", Unit: "s", Data: metricdata.Histogram[float64]{Temporality: metricdata.DeltaTemporality,
				DataPoints: []metricdata.HistogramDataPoint[float64]{{Attributes: attrs, StartTime: testStart, Time: testStart.Add(1), Count: 3,
					Bounds: []float64{0.1}, BucketCounts: []uint64{1, 2}, Sum: 0.75, Min: metricdata.NewExtrema(0.05), Max: metricdata.NewExtrema(0.5)}}}},
			{Name: "exp", Data: metricdata.ExponentialHistogram[int64]{Temporality: metricdata.CumulativeTemporality,
				DataPoints: []metricdata.ExponentialHistogramDataPoint[int64]{{Time: testStart, Count: 2, Sum: 9, Scale: -1, ZeroCount: 1,
					PositiveBucket: metricdata.ExponentialBucket{Offset: -2, Counts: []uint64{1}}}}}},
		}}},
	}
	body, err := json.Marshal(metricsRequest(rm))
	if err != nil {
		t.Fatal(err)
	}
	checkOTLPJSON(t, body)
	for _, want := range []string{
		`"scope":{"name":"s","version":"1"}`,
		`{"name":"sum","unit":"1","sum":{"dataPoints":[{"attributes":[{"key":"mcp.method.name","value":{"stringValue":"tools/call"}}],"startTimeUnixNano":"1700000000000000001","timeUnixNano":"1700000000000000002","asInt":"42"}],"aggregationTemporality":2,"isMonotonic":true}}`,
		`{"name":"gauge","gauge":{"dataPoints":[{"timeUnixNano":"1700000000000000001","asDouble":1.5}]}}`,
		`"histogram":{"dataPoints":[{"attributes":[{"key":"mcp.method.name","value":{"stringValue":"tools/call"}}],"startTimeUnixNano":"1700000000000000001","timeUnixNano":"1700000000000000002","count":"3","sum":0.75,"bucketCounts":["1","2"],"explicitBounds":[0.1],"min":0.05,"max":0.5}],"aggregationTemporality":1}`,
		`"exponentialHistogram":{"dataPoints":[{"timeUnixNano":"1700000000000000001","count":"2","sum":9,"scale":-1,"zeroCount":"1","positive":{"offset":-2,"bucketCounts":["1"]},"negative":{"offset":0},"zeroThreshold":0}],"aggregationTemporality":2}`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("no %s in\n%s", want, body)
		}
	}
}

// FuzzOTLPJSON: whatever the values, the message keeps the rules, and
// integers and strings come back as they went in.
func FuzzOTLPJSON(f *testing.F) {
	f.Add(int64(-5), 0.5, "tools/call", []byte{1, 2}, uint8(3), uint64(1))
	f.Add(int64(math.MinInt64), math.Inf(1), "\xff\x00\"\\", []byte{}, uint8(9), uint64(math.MaxUint64))
	f.Fuzz(func(t *testing.T, n int64, x float64, s string, b []byte, kind uint8, count uint64) {
		sp := stubSpan(attribute.Int64("n", n), attribute.Float64("x", x), attribute.String("s", s), attribute.Slice("b", attribute.ByteSliceValue(b)))
		sp.Name = s
		sp.SpanKind = trace.SpanKind(kind % 6)
		body, err := json.Marshal(tracesRequest([]sdktrace.ReadOnlySpan{sp.Snapshot()}))
		if err != nil {
			t.Fatal(err)
		}
		checkOTLPJSON(t, body)
		var got jsonTraces
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		span := got.ResourceSpans[0].ScopeSpans[0].Spans[0]
		if span.attr("n") != strconv.FormatInt(n, 10) {
			t.Errorf("intValue %v, want %d as a string", span.attr("n"), n)
		}
		var want string // what a JSON string carries of s: invalid UTF-8 turned into U+FFFD
		enc, _ := json.Marshal(s)
		json.Unmarshal(enc, &want)
		if span.Name != want || span.attr("s") != want {
			t.Errorf("name %q, attribute %v; want %q", span.Name, span.attr("s"), want)
		}
		if span.Kind != int(kind%6) {
			t.Errorf("kind %d, want %d", span.Kind, kind%6)
		}
		rm := &metricdata.ResourceMetrics{ScopeMetrics: []metricdata.ScopeMetrics{{Metrics: []metricdata.Metrics{{Name: "h",
			Data: metricdata.Histogram[int64]{Temporality: metricdata.DeltaTemporality, DataPoints: []metricdata.HistogramDataPoint[int64]{{
				Count: count, BucketCounts: []uint64{count}, Sum: n, Min: metricdata.NewExtrema(n)}}}}}}}}
		body, err = json.Marshal(metricsRequest(rm))
		if err != nil {
			t.Fatal(err)
		}
		checkOTLPJSON(t, body)
		if want := fmt.Sprintf(`"count":"%d"`, count); !strings.Contains(string(body), want) {
			t.Errorf("no %s in %s", want, body)
		}
	})
}

package main

// OTLP's JSON encoding of spans and metrics, as the OTLP specification's
// "JSON Protobuf Encoding" section gives it: the proto3 JSON mapping with
// lowerCamelCase keys, trace and span ids as hex (not base64), enums as
// integers, and 64-bit integers as decimal strings. Written here rather
// than generated from the OTLP protos: see telemetry_otlp.go for why.

import (
	"encoding/hex"
	"math"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// i64 is a 64-bit signed integer: a decimal string in OTLP JSON.
type i64 int64

func (v i64) MarshalJSON() ([]byte, error) {
	return strconv.AppendQuote(nil, strconv.FormatInt(int64(v), 10)), nil
}

// u64 is a 64-bit unsigned integer (fixed64, uint64): a decimal string.
type u64 uint64

func (v u64) MarshalJSON() ([]byte, error) {
	return strconv.AppendQuote(nil, strconv.FormatUint(uint64(v), 10)), nil
}

// f64 is a double: a number, or "NaN", "Infinity", "-Infinity", which
// JSON numbers cannot say.
type f64 float64

func (v f64) MarshalJSON() ([]byte, error) {
	f := float64(v)
	switch {
	case math.IsNaN(f):
		return []byte(`"NaN"`), nil
	case math.IsInf(f, 1):
		return []byte(`"Infinity"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-Infinity"`), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// unixNano is t in nanoseconds since the epoch; 0 for the zero time.
func unixNano(t time.Time) u64 {
	if t.IsZero() {
		return 0
	}
	return u64(t.UnixNano())
}

type otlpKV struct {
	Key   string  `json:"key"`
	Value otlpAny `json:"value"`
}

// otlpAny is an AnyValue: one of its fields set, none for an empty value.
type otlpAny struct {
	StringValue *string     `json:"stringValue,omitempty"`
	BoolValue   *bool       `json:"boolValue,omitempty"`
	IntValue    *i64        `json:"intValue,omitempty"`
	DoubleValue *f64        `json:"doubleValue,omitempty"`
	ArrayValue  *otlpArray  `json:"arrayValue,omitempty"`
	KVListValue *otlpKVList `json:"kvlistValue,omitempty"`
	BytesValue  *[]byte     `json:"bytesValue,omitempty"` // base64, as proto3 JSON has bytes
}

type otlpArray struct {
	Values []otlpAny `json:"values"`
}

type otlpKVList struct {
	Values []otlpKV `json:"values"`
}

func ptr[T any](v T) *T { return &v }

func anyValue(v attribute.Value) otlpAny {
	switch v.Type() {
	case attribute.EMPTY:
		return otlpAny{}
	case attribute.BOOL:
		return otlpAny{BoolValue: ptr(v.AsBool())}
	case attribute.INT64:
		return otlpAny{IntValue: ptr(i64(v.AsInt64()))}
	case attribute.FLOAT64:
		return otlpAny{DoubleValue: ptr(f64(v.AsFloat64()))}
	case attribute.STRING:
		return otlpAny{StringValue: ptr(v.AsString())}
	case attribute.BYTESLICE:
		return otlpAny{BytesValue: ptr(v.AsByteSlice())}
	case attribute.BOOLSLICE:
		return arrayOf(v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		return arrayOf(v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		return arrayOf(v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		return arrayOf(v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		return arrayOf(v.AsSlice(), func(e attribute.Value) attribute.Value { return e })
	case attribute.MAP:
		return otlpAny{KVListValue: &otlpKVList{Values: keyValues(v.AsMap())}}
	}
	// A type newer than this encoder: its text, rather than nothing.
	return otlpAny{StringValue: ptr(v.Emit())}
}

func arrayOf[T any](s []T, value func(T) attribute.Value) otlpAny {
	a := &otlpArray{Values: make([]otlpAny, 0, len(s))}
	for _, e := range s {
		a.Values = append(a.Values, anyValue(value(e)))
	}
	return otlpAny{ArrayValue: a}
}

func keyValues(kvs []attribute.KeyValue) []otlpKV {
	if len(kvs) == 0 {
		return nil
	}
	out := make([]otlpKV, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, otlpKV{Key: string(kv.Key), Value: anyValue(kv.Value)})
	}
	return out
}

type otlpResource struct {
	Attributes []otlpKV `json:"attributes,omitempty"`
}

func resourceOf(r *resource.Resource) otlpResource {
	if r == nil {
		return otlpResource{}
	}
	return otlpResource{Attributes: keyValues(r.Attributes())}
}

type otlpScope struct {
	Name       string   `json:"name,omitempty"`
	Version    string   `json:"version,omitempty"`
	Attributes []otlpKV `json:"attributes,omitempty"`
}

func scopeOf(s instrumentation.Scope) otlpScope {
	return otlpScope{Name: s.Name, Version: s.Version, Attributes: keyValues(s.Attributes.ToSlice())}
}

// Traces: an ExportTraceServiceRequest.

type otlpTraces struct {
	ResourceSpans []otlpResourceSpans `json:"resourceSpans"`
}

type otlpResourceSpans struct {
	Resource   otlpResource     `json:"resource"`
	ScopeSpans []otlpScopeSpans `json:"scopeSpans"`
	SchemaURL  string           `json:"schemaUrl,omitempty"`
}

type otlpScopeSpans struct {
	Scope     otlpScope  `json:"scope"`
	Spans     []otlpSpan `json:"spans"`
	SchemaURL string     `json:"schemaUrl,omitempty"`
}

type otlpSpan struct {
	TraceID                string      `json:"traceId"`
	SpanID                 string      `json:"spanId"`
	TraceState             string      `json:"traceState,omitempty"`
	ParentSpanID           string      `json:"parentSpanId,omitempty"`
	Flags                  uint32      `json:"flags,omitempty"`
	Name                   string      `json:"name"`
	Kind                   int         `json:"kind"`
	StartTimeUnixNano      u64         `json:"startTimeUnixNano"`
	EndTimeUnixNano        u64         `json:"endTimeUnixNano"`
	Attributes             []otlpKV    `json:"attributes,omitempty"`
	DroppedAttributesCount int         `json:"droppedAttributesCount,omitempty"`
	Events                 []otlpEvent `json:"events,omitempty"`
	DroppedEventsCount     int         `json:"droppedEventsCount,omitempty"`
	Links                  []otlpLink  `json:"links,omitempty"`
	DroppedLinksCount      int         `json:"droppedLinksCount,omitempty"`
	Status                 *otlpStatus `json:"status,omitempty"`
}

type otlpEvent struct {
	TimeUnixNano           u64      `json:"timeUnixNano"`
	Name                   string   `json:"name"`
	Attributes             []otlpKV `json:"attributes,omitempty"`
	DroppedAttributesCount int      `json:"droppedAttributesCount,omitempty"`
}

type otlpLink struct {
	TraceID                string   `json:"traceId"`
	SpanID                 string   `json:"spanId"`
	TraceState             string   `json:"traceState,omitempty"`
	Attributes             []otlpKV `json:"attributes,omitempty"`
	DroppedAttributesCount int      `json:"droppedAttributesCount,omitempty"`
	Flags                  uint32   `json:"flags,omitempty"`
}

type otlpStatus struct {
	Message string `json:"message,omitempty"`
	Code    int    `json:"code,omitempty"`
}

// The span flags' bits above the W3C trace flags: whether the parent's
// (or the link's) remoteness is known, and whether it is remote.
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

// OTLP's status codes: the numbers differ from Go's codes package.
const (
	otlpStatusUnset = 0
	otlpStatusOK    = 1
	otlpStatusError = 2
)

// tracesRequest groups spans by resource and scope.
func tracesRequest(spans []sdktrace.ReadOnlySpan) otlpTraces {
	type scopeKey struct {
		name, version, schema string
		attrs                 attribute.Distinct
	}
	var req otlpTraces
	resIdx := map[attribute.Distinct]int{}
	scopeIdx := map[attribute.Distinct]map[scopeKey]int{}
	for _, s := range spans {
		res := s.Resource()
		rk := res.Equivalent()
		ri, ok := resIdx[rk]
		if !ok {
			ri = len(req.ResourceSpans)
			resIdx[rk] = ri
			scopeIdx[rk] = map[scopeKey]int{}
			req.ResourceSpans = append(req.ResourceSpans, otlpResourceSpans{Resource: resourceOf(res), SchemaURL: res.SchemaURL()})
		}
		sc := s.InstrumentationScope()
		sk := scopeKey{sc.Name, sc.Version, sc.SchemaURL, sc.Attributes.Equivalent()}
		rs := &req.ResourceSpans[ri]
		si, ok := scopeIdx[rk][sk]
		if !ok {
			si = len(rs.ScopeSpans)
			scopeIdx[rk][sk] = si
			rs.ScopeSpans = append(rs.ScopeSpans, otlpScopeSpans{Scope: scopeOf(sc), SchemaURL: sc.SchemaURL})
		}
		rs.ScopeSpans[si].Spans = append(rs.ScopeSpans[si].Spans, spanOf(s))
	}
	return req
}

func spanOf(s sdktrace.ReadOnlySpan) otlpSpan {
	sc := s.SpanContext()
	out := otlpSpan{
		TraceID:                sc.TraceID().String(),
		SpanID:                 sc.SpanID().String(),
		TraceState:             sc.TraceState().String(),
		Flags:                  uint32(sc.TraceFlags()) | flagHasIsRemote,
		Name:                   s.Name(),
		Kind:                   int(s.SpanKind()), // Go's numbering is OTLP's: 1 internal … 5 consumer
		StartTimeUnixNano:      unixNano(s.StartTime()),
		EndTimeUnixNano:        unixNano(s.EndTime()),
		Attributes:             keyValues(s.Attributes()),
		DroppedAttributesCount: s.DroppedAttributes(),
		DroppedEventsCount:     s.DroppedEvents(),
		DroppedLinksCount:      s.DroppedLinks(),
	}
	if p := s.Parent(); p.HasSpanID() {
		out.ParentSpanID = p.SpanID().String()
		if p.IsRemote() {
			out.Flags |= flagIsRemote
		}
	}
	for _, e := range s.Events() {
		out.Events = append(out.Events, otlpEvent{TimeUnixNano: unixNano(e.Time), Name: e.Name,
			Attributes: keyValues(e.Attributes), DroppedAttributesCount: e.DroppedAttributeCount})
	}
	for _, l := range s.Links() {
		flags := uint32(l.SpanContext.TraceFlags()) | flagHasIsRemote
		if l.SpanContext.IsRemote() {
			flags |= flagIsRemote
		}
		out.Links = append(out.Links, otlpLink{TraceID: l.SpanContext.TraceID().String(), SpanID: l.SpanContext.SpanID().String(),
			TraceState: l.SpanContext.TraceState().String(), Attributes: keyValues(l.Attributes),
			DroppedAttributesCount: l.DroppedAttributeCount, Flags: flags})
	}
	switch st := s.Status(); st.Code {
	case codes.Error:
		out.Status = &otlpStatus{Code: otlpStatusError, Message: st.Description}
	case codes.Ok:
		out.Status = &otlpStatus{Code: otlpStatusOK}
	}
	return out
}

// Metrics: an ExportMetricsServiceRequest.

type otlpMetrics struct {
	ResourceMetrics []otlpResourceMetrics `json:"resourceMetrics"`
}

type otlpResourceMetrics struct {
	Resource     otlpResource       `json:"resource"`
	ScopeMetrics []otlpScopeMetrics `json:"scopeMetrics"`
	SchemaURL    string             `json:"schemaUrl,omitempty"`
}

type otlpScopeMetrics struct {
	Scope     otlpScope    `json:"scope"`
	Metrics   []otlpMetric `json:"metrics"`
	SchemaURL string       `json:"schemaUrl,omitempty"`
}

type otlpMetric struct {
	Name                 string            `json:"name"`
	Description          string            `json:"description,omitempty"`
	Unit                 string            `json:"unit,omitempty"`
	Gauge                *otlpNumbers      `json:"gauge,omitempty"`
	Sum                  *otlpNumbers      `json:"sum,omitempty"`
	Histogram            *otlpHistogram    `json:"histogram,omitempty"`
	ExponentialHistogram *otlpExpHistogram `json:"exponentialHistogram,omitempty"`
	Summary              *otlpSummary      `json:"summary,omitempty"`
}

// otlpNumbers is a Gauge (no temporality) or a Sum.
type otlpNumbers struct {
	DataPoints             []otlpNumberPoint `json:"dataPoints"`
	AggregationTemporality int               `json:"aggregationTemporality,omitempty"`
	IsMonotonic            bool              `json:"isMonotonic,omitempty"`
}

type otlpNumberPoint struct {
	Attributes        []otlpKV       `json:"attributes,omitempty"`
	StartTimeUnixNano u64            `json:"startTimeUnixNano,omitempty"`
	TimeUnixNano      u64            `json:"timeUnixNano"`
	AsDouble          *f64           `json:"asDouble,omitempty"`
	AsInt             *i64           `json:"asInt,omitempty"`
	Exemplars         []otlpExemplar `json:"exemplars,omitempty"`
}

type otlpExemplar struct {
	FilteredAttributes []otlpKV `json:"filteredAttributes,omitempty"`
	TimeUnixNano       u64      `json:"timeUnixNano"`
	AsDouble           *f64     `json:"asDouble,omitempty"`
	AsInt              *i64     `json:"asInt,omitempty"`
	SpanID             string   `json:"spanId,omitempty"`
	TraceID            string   `json:"traceId,omitempty"`
}

type otlpHistogram struct {
	DataPoints             []otlpHistogramPoint `json:"dataPoints"`
	AggregationTemporality int                  `json:"aggregationTemporality"`
}

type otlpHistogramPoint struct {
	Attributes        []otlpKV       `json:"attributes,omitempty"`
	StartTimeUnixNano u64            `json:"startTimeUnixNano,omitempty"`
	TimeUnixNano      u64            `json:"timeUnixNano"`
	Count             u64            `json:"count"`
	Sum               *f64           `json:"sum,omitempty"`
	BucketCounts      []u64          `json:"bucketCounts,omitempty"`
	ExplicitBounds    []f64          `json:"explicitBounds,omitempty"`
	Exemplars         []otlpExemplar `json:"exemplars,omitempty"`
	Min               *f64           `json:"min,omitempty"`
	Max               *f64           `json:"max,omitempty"`
}

type otlpExpHistogram struct {
	DataPoints             []otlpExpPoint `json:"dataPoints"`
	AggregationTemporality int            `json:"aggregationTemporality"`
}

type otlpExpPoint struct {
	Attributes        []otlpKV       `json:"attributes,omitempty"`
	StartTimeUnixNano u64            `json:"startTimeUnixNano,omitempty"`
	TimeUnixNano      u64            `json:"timeUnixNano"`
	Count             u64            `json:"count"`
	Sum               *f64           `json:"sum,omitempty"`
	Scale             int32          `json:"scale"`
	ZeroCount         u64            `json:"zeroCount"`
	Positive          otlpBuckets    `json:"positive"`
	Negative          otlpBuckets    `json:"negative"`
	Exemplars         []otlpExemplar `json:"exemplars,omitempty"`
	Min               *f64           `json:"min,omitempty"`
	Max               *f64           `json:"max,omitempty"`
	ZeroThreshold     f64            `json:"zeroThreshold"`
}

type otlpBuckets struct {
	Offset       int32 `json:"offset"`
	BucketCounts []u64 `json:"bucketCounts,omitempty"`
}

type otlpSummary struct {
	DataPoints []otlpSummaryPoint `json:"dataPoints"`
}

type otlpSummaryPoint struct {
	Attributes        []otlpKV       `json:"attributes,omitempty"`
	StartTimeUnixNano u64            `json:"startTimeUnixNano,omitempty"`
	TimeUnixNano      u64            `json:"timeUnixNano"`
	Count             u64            `json:"count"`
	Sum               f64            `json:"sum"`
	QuantileValues    []otlpQuantile `json:"quantileValues,omitempty"`
}

type otlpQuantile struct {
	Quantile f64 `json:"quantile"`
	Value    f64 `json:"value"`
}

// OTLP's aggregation temporality: the numbers differ from metricdata's.
const (
	otlpDelta      = 1
	otlpCumulative = 2
)

func temporalityOf(t metricdata.Temporality) int {
	switch t {
	case metricdata.DeltaTemporality:
		return otlpDelta
	case metricdata.CumulativeTemporality:
		return otlpCumulative
	}
	return 0
}

// metricsRequest encodes what a reader collected; it keeps nothing of rm,
// which the SDK reuses.
func metricsRequest(rm *metricdata.ResourceMetrics) otlpMetrics {
	out := otlpResourceMetrics{Resource: resourceOf(rm.Resource), ScopeMetrics: []otlpScopeMetrics{}}
	if rm.Resource != nil {
		out.SchemaURL = rm.Resource.SchemaURL()
	}
	for _, sm := range rm.ScopeMetrics {
		s := otlpScopeMetrics{Scope: scopeOf(sm.Scope), SchemaURL: sm.Scope.SchemaURL, Metrics: []otlpMetric{}}
		for _, m := range sm.Metrics {
			if om, ok := metricOf(m); ok {
				s.Metrics = append(s.Metrics, om)
			}
		}
		out.ScopeMetrics = append(out.ScopeMetrics, s)
	}
	return otlpMetrics{ResourceMetrics: []otlpResourceMetrics{out}}
}

// metricOf encodes one metric; false for an aggregation it does not know.
func metricOf(m metricdata.Metrics) (otlpMetric, bool) {
	out := otlpMetric{Name: m.Name, Description: m.Description, Unit: m.Unit}
	switch d := m.Data.(type) {
	case metricdata.Gauge[int64]:
		out.Gauge = &otlpNumbers{DataPoints: numberPoints(d.DataPoints)}
	case metricdata.Gauge[float64]:
		out.Gauge = &otlpNumbers{DataPoints: numberPoints(d.DataPoints)}
	case metricdata.Sum[int64]:
		out.Sum = &otlpNumbers{DataPoints: numberPoints(d.DataPoints), AggregationTemporality: temporalityOf(d.Temporality), IsMonotonic: d.IsMonotonic}
	case metricdata.Sum[float64]:
		out.Sum = &otlpNumbers{DataPoints: numberPoints(d.DataPoints), AggregationTemporality: temporalityOf(d.Temporality), IsMonotonic: d.IsMonotonic}
	case metricdata.Histogram[int64]:
		out.Histogram = &otlpHistogram{DataPoints: histogramPoints(d.DataPoints), AggregationTemporality: temporalityOf(d.Temporality)}
	case metricdata.Histogram[float64]:
		out.Histogram = &otlpHistogram{DataPoints: histogramPoints(d.DataPoints), AggregationTemporality: temporalityOf(d.Temporality)}
	case metricdata.ExponentialHistogram[int64]:
		out.ExponentialHistogram = &otlpExpHistogram{DataPoints: expPoints(d.DataPoints), AggregationTemporality: temporalityOf(d.Temporality)}
	case metricdata.ExponentialHistogram[float64]:
		out.ExponentialHistogram = &otlpExpHistogram{DataPoints: expPoints(d.DataPoints), AggregationTemporality: temporalityOf(d.Temporality)}
	case metricdata.Summary:
		out.Summary = &otlpSummary{DataPoints: summaryPoints(d.DataPoints)}
	default:
		return out, false
	}
	return out, true
}

// number is a point's value: asInt for int64 instruments, asDouble for
// float64 ones.
func number[N int64 | float64](v N) (*f64, *i64) {
	switch v := any(v).(type) {
	case int64:
		return nil, ptr(i64(v))
	case float64:
		return ptr(f64(v)), nil
	}
	return nil, nil
}

func numberPoints[N int64 | float64](dps []metricdata.DataPoint[N]) []otlpNumberPoint {
	out := make([]otlpNumberPoint, 0, len(dps))
	for _, dp := range dps {
		p := otlpNumberPoint{Attributes: keyValues(dp.Attributes.ToSlice()), StartTimeUnixNano: unixNano(dp.StartTime),
			TimeUnixNano: unixNano(dp.Time), Exemplars: exemplars(dp.Exemplars)}
		p.AsDouble, p.AsInt = number(dp.Value)
		out = append(out, p)
	}
	return out
}

func exemplars[N int64 | float64](es []metricdata.Exemplar[N]) []otlpExemplar {
	var out []otlpExemplar
	for _, e := range es {
		x := otlpExemplar{FilteredAttributes: keyValues(e.FilteredAttributes), TimeUnixNano: unixNano(e.Time),
			SpanID: hex.EncodeToString(e.SpanID), TraceID: hex.EncodeToString(e.TraceID)}
		x.AsDouble, x.AsInt = number(e.Value)
		out = append(out, x)
	}
	return out
}

// extremum is a histogram's min or max: a double whatever the instrument's
// type; nil when not recorded.
func extremum[N int64 | float64](e metricdata.Extrema[N]) *f64 {
	if v, ok := e.Value(); ok {
		return ptr(f64(v))
	}
	return nil
}

func counts(cs []uint64) []u64 {
	out := make([]u64, len(cs))
	for i, c := range cs {
		out[i] = u64(c)
	}
	return out
}

func histogramPoints[N int64 | float64](dps []metricdata.HistogramDataPoint[N]) []otlpHistogramPoint {
	out := make([]otlpHistogramPoint, 0, len(dps))
	for _, dp := range dps {
		bounds := make([]f64, len(dp.Bounds))
		for i, b := range dp.Bounds {
			bounds[i] = f64(b)
		}
		out = append(out, otlpHistogramPoint{Attributes: keyValues(dp.Attributes.ToSlice()), StartTimeUnixNano: unixNano(dp.StartTime),
			TimeUnixNano: unixNano(dp.Time), Count: u64(dp.Count), Sum: ptr(f64(dp.Sum)), BucketCounts: counts(dp.BucketCounts),
			ExplicitBounds: bounds, Exemplars: exemplars(dp.Exemplars), Min: extremum(dp.Min), Max: extremum(dp.Max)})
	}
	return out
}

func expPoints[N int64 | float64](dps []metricdata.ExponentialHistogramDataPoint[N]) []otlpExpPoint {
	out := make([]otlpExpPoint, 0, len(dps))
	for _, dp := range dps {
		out = append(out, otlpExpPoint{Attributes: keyValues(dp.Attributes.ToSlice()), StartTimeUnixNano: unixNano(dp.StartTime),
			TimeUnixNano: unixNano(dp.Time), Count: u64(dp.Count), Sum: ptr(f64(dp.Sum)), Scale: dp.Scale, ZeroCount: u64(dp.ZeroCount),
			Positive:  otlpBuckets{Offset: dp.PositiveBucket.Offset, BucketCounts: counts(dp.PositiveBucket.Counts)},
			Negative:  otlpBuckets{Offset: dp.NegativeBucket.Offset, BucketCounts: counts(dp.NegativeBucket.Counts)},
			Exemplars: exemplars(dp.Exemplars), Min: extremum(dp.Min), Max: extremum(dp.Max), ZeroThreshold: f64(dp.ZeroThreshold)})
	}
	return out
}

func summaryPoints(dps []metricdata.SummaryDataPoint) []otlpSummaryPoint {
	out := make([]otlpSummaryPoint, 0, len(dps))
	for _, dp := range dps {
		p := otlpSummaryPoint{Attributes: keyValues(dp.Attributes.ToSlice()), StartTimeUnixNano: unixNano(dp.StartTime),
			TimeUnixNano: unixNano(dp.Time), Count: u64(dp.Count), Sum: f64(dp.Sum)}
		for _, q := range dp.QuantileValues {
			p.QuantileValues = append(p.QuantileValues, otlpQuantile{Quantile: f64(q.Quantile), Value: f64(q.Value)})
		}
		out = append(out, p)
	}
	return out
}

package sseparse_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	r3 "github.com/r3labs/sse/v2"
	gosse "github.com/tmaxmax/go-sse"

	"github.com/anymcp/anymcp/sse"
)

// limit is the event-size limit every parser is given, so none of them is
// stopped by its (different) default.
const limit = 64 << 20

const (
	smallCount = 10000
	hugeSize   = 16 << 20
	tlsRecord  = 16 << 10
)

// smallEvents builds n typical MCP message events: an id, the type "message"
// and one JSON-RPC message of about 150-250 bytes.
func smallEvents(n int) []byte {
	var b bytes.Buffer
	for i := range n {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "event: message\nid: %d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"tok-%d\",\"progress\":%d,\"total\":100,\"message\":\"working\"}}\n\n", i, i, i%100)
		case 1:
			fmt.Fprintf(&b, "event: message\nid: %d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"logger\":\"server\",\"data\":\"step %d done\"}}\n\n", i, i)
		default:
			fmt.Fprintf(&b, "event: message\nid: %d\ndata: {\"jsonrpc\":\"2.0\",\"id\":%d,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"The result of call number %d.\"}],\"isError\":false}}\n\n", i, i, i)
		}
	}
	return b.Bytes()
}

// hugeEvent builds one event whose data is a single line of size bytes.
func hugeEvent(size int) []byte {
	b := make([]byte, 0, size+16)
	b = append(b, "data: "...)
	b = append(b, bytes.Repeat([]byte{'x'}, size)...)
	return append(b, "\n\n"...)
}

// cappedReader returns at most max bytes per Read, like a response body
// read from a TLS connection.
type cappedReader struct {
	r   io.Reader
	max int
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if len(p) > c.max {
		p = p[:c.max]
	}
	return c.r.Read(p)
}

var feeders = []struct {
	name string
	wrap func([]byte) io.Reader
}{
	{"mem", func(b []byte) io.Reader { return bytes.NewReader(b) }},
	{"tls16k", func(b []byte) io.Reader { return &cappedReader{bytes.NewReader(b), tlsRecord} }},
}

// A parser reads all events of src and returns how many events and data
// bytes it saw.
type parser struct {
	name  string
	parse func(src io.Reader) (events, bytes int, err error)
}

var parsers = []parser{
	{"anymcp", func(src io.Reader) (int, int, error) {
		r := sse.NewReader(src, limit)
		n, size := 0, 0
		for {
			e, err := r.Next()
			if err == io.EOF {
				return n, size, nil
			} else if err != nil {
				return n, size, err
			}
			n++
			size += len(e.Data)
		}
	}},
	{"go-sse", func(src io.Reader) (int, int, error) {
		n, size := 0, 0
		for e, err := range gosse.Read(src, &gosse.ReadConfig{MaxEventSize: limit}) {
			if err != nil {
				return n, size, err
			}
			n++
			size += len(e.Data)
		}
		return n, size, nil
	}},
	// Framing only: r3labs/sse does not export its field parser.
	{"r3labs-framing", func(src io.Reader) (int, int, error) {
		r := r3.NewEventStreamReader(src, limit)
		n, size := 0, 0
		for {
			e, err := r.ReadEvent()
			if err == io.EOF {
				return n, size, nil
			} else if err != nil {
				return n, size, err
			}
			n++
			size += len(e)
		}
	}},
}

func runBench(b *testing.B, in []byte, wantEvents int) {
	for _, p := range parsers {
		for _, f := range feeders {
			b.Run(p.name+"/"+f.name, func(b *testing.B) {
				b.SetBytes(int64(len(in)))
				b.ReportAllocs()
				for b.Loop() {
					n, _, err := p.parse(f.wrap(in))
					if err != nil {
						b.Fatal(err)
					}
					if n != wantEvents {
						b.Fatalf("got %d events, want %d", n, wantEvents)
					}
				}
			})
		}
	}
}

func BenchmarkSmallEvents(b *testing.B) { runBench(b, smallEvents(smallCount), smallCount) }

func BenchmarkHugeEvent(b *testing.B) { runBench(b, hugeEvent(hugeSize), 1) }

// TestSameWork checks that the benchmarked parsers agree on the benchmark
// inputs, so that they are timed doing the same work.
func TestSameWork(t *testing.T) {
	small, huge := smallEvents(smallCount), hugeEvent(hugeSize)
	wantSmall := -1 // data bytes of the small events, as anymcp counts them
	for _, p := range parsers {
		for _, f := range feeders {
			n, size, err := p.parse(f.wrap(small))
			if err != nil || n != smallCount {
				t.Errorf("%s/%s small: %d events, %v", p.name, f.name, n, err)
			}
			if wantSmall < 0 {
				wantSmall = size
			}
			if p.name != "r3labs-framing" && size != wantSmall {
				t.Errorf("%s/%s small: %d data bytes, want %d", p.name, f.name, size, wantSmall)
			}
			if f.name != "mem" {
				continue // the benchmarks check the huge event on every feeder
			}
			n, size, err = p.parse(f.wrap(huge))
			if err != nil || n != 1 {
				t.Errorf("%s/%s huge: %d events, %v", p.name, f.name, n, err)
			}
			if p.name != "r3labs-framing" && size != hugeSize {
				t.Errorf("%s/%s huge: %d data bytes, want %d", p.name, f.name, size, hugeSize)
			}
		}
	}
}

// --- conformance ---------------------------------------------------------

// event is an event reduced to what every parser reports.
type event struct{ Type, Data, ID string }

func (e event) String() string { return fmt.Sprintf("{%s %q id=%q}", e.Type, e.Data, e.ID) }

// outcome is what one parser made of one stream.
type outcome struct {
	events []event
	lastID string // "?" when the parser does not expose it
	retry  string // "?" when the parser does not expose it, "-" when none was seen
	err    error
}

func (o outcome) String() string {
	return fmt.Sprintf("events=%v lastID=%q retry=%s err=%v", o.events, o.lastID, o.retry, o.err)
}

func typeOrMessage(t string) string {
	if t == "" {
		return "message"
	}
	return t
}

func withAnymcp(src io.Reader) outcome {
	r := sse.NewReader(src, limit)
	var o outcome
	for {
		e, err := r.Next()
		if err != nil {
			if err != io.EOF {
				o.err = err
			}
			break
		}
		o.events = append(o.events, event{e.Type, string(e.Data), e.ID})
	}
	o.lastID = r.LastEventID()
	o.retry = "-"
	if d, ok := r.Retry(); ok {
		o.retry = d.String()
	}
	return o
}

func withGoSSE(src io.Reader) outcome {
	// Read offers no access to retry values, nor to the last event ID
	// outside of a dispatched event.
	o := outcome{lastID: "?", retry: "?"}
	for e, err := range gosse.Read(src, &gosse.ReadConfig{MaxEventSize: limit}) {
		if err != nil {
			o.err = err
			break
		}
		o.events = append(o.events, event{typeOrMessage(e.Type), e.Data, e.LastEventID})
	}
	return o
}

// withR3labs runs the r3labs client against a server that sends in as the
// body of its response; its field parsing is not reachable otherwise.
func withR3labs(in string) outcome {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, in)
	}))
	defer srv.Close()
	c := r3.NewClient(srv.URL, r3.ClientMaxBufferSize(limit))
	c.ReconnectStrategy = nil
	// The client ignores retry values; it keeps the raw bytes on each event.
	o := outcome{retry: "?"}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := c.SubscribeRawWithContext(ctx, func(e *r3.Event) {
		o.events = append(o.events, event{typeOrMessage(string(e.Event)), string(e.Data), string(e.ID)})
	})
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		o.err = err
	}
	id, _ := c.LastEventID.Load().([]byte)
	o.lastID = string(id)
	return o
}

func ev(typ, data, id string) event { return event{typ, data, id} }

// conformanceCases are streams whose WHATWG interpretation is easy to get
// wrong, with that interpretation spelled out.
var conformanceCases = []struct {
	name   string
	in     string
	want   []event
	lastID string
	retry  string
}{
	{"LF", "data: a\n\n", []event{ev("message", "a", "")}, "", "-"},
	{"CRLF", "data: a\r\ndata: b\r\n\r\n", []event{ev("message", "a\nb", "")}, "", "-"},
	{"CR", "data: a\rdata: b\r\r", []event{ev("message", "a\nb", "")}, "", "-"},
	{"LF then CR are two line ends", "data: a\n\rdata: b\n\n", []event{ev("message", "a", ""), ev("message", "b", "")}, "", "-"},
	{"CR CR LF", "data: a\r\r\ndata: b\n\n", []event{ev("message", "a", ""), ev("message", "b", "")}, "", "-"},
	{"mixed endings in one event", "data: a\rdata: b\ndata: c\r\n\n", []event{ev("message", "a\nb\nc", "")}, "", "-"},
	{"leading blank lines", "\n\r\n\rdata: a\n\n", []event{ev("message", "a", "")}, "", "-"},
	{"BOM", "\ufeffdata: a\n\n", []event{ev("message", "a", "")}, "", "-"},
	{"comment", ": ping\ndata: a\n:\n\n", []event{ev("message", "a", "")}, "", "-"},
	{"space handling", "data:a\ndata:  b\n\n", []event{ev("message", "a\n b", "")}, "", "-"},
	{"field without colon", "data\ndata\n\n", []event{ev("message", "\n", "")}, "", "-"},
	{"unknown and miscased fields", "foo: x\nData: y\n data: z\ndata: a\n\n", []event{ev("message", "a", "")}, "", "-"},
	{"priming event: id only", "id: p1\n\ndata: a\n\n", []event{ev("message", "a", "p1")}, "p1", "-"},
	{"priming event: id and retry", "id: p1\nretry: 500\n\n", nil, "p1", "500ms"},
	{"priming event: id and empty data", "id: p1\ndata:\n\n", []event{ev("message", "", "p1")}, "p1", "-"},
	{"event type only", "event: x\n\ndata: a\n\n", []event{ev("message", "a", "")}, "", "-"},
	{"id persists", "id: 7\ndata: a\n\ndata: b\n\n", []event{ev("message", "a", "7"), ev("message", "b", "7")}, "7", "-"},
	{"empty id resets", "id: 7\ndata: a\n\nid:\ndata: b\n\n", []event{ev("message", "a", "7"), ev("message", "b", "")}, "", "-"},
	{"id with NUL ignored", "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n", []event{ev("message", "a", "1"), ev("message", "b", "1")}, "1", "-"},
	{"id mid-event", "data: a\nid: 5\ndata: b\n\n", []event{ev("message", "a\nb", "5")}, "5", "-"},
	{"retry valid", "retry: 2500\ndata: a\n\n", []event{ev("message", "a", "")}, "", "2.5s"},
	{"retry invalid", "retry: +10\nretry: 1.5\nretry: 10 \ndata: a\n\n", []event{ev("message", "a", "")}, "", "-"},
	{"EOF after a line, no blank line", "data: a\n\ndata: b\n", []event{ev("message", "a", "")}, "", "-"},
	{"EOF mid-line", "data: a\n\ndata: b", []event{ev("message", "a", "")}, "", "-"},
}

func sameEvents(a, b []event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestConformance checks anymcp's parser against the WHATWG rules and logs
// every departure of the other parsers.
func TestConformance(t *testing.T) {
	var report strings.Builder
	for _, tc := range conformanceCases {
		want := outcome{events: tc.want, lastID: tc.lastID, retry: tc.retry}
		results := []struct {
			name string
			got  outcome
		}{
			{"anymcp", withAnymcp(strings.NewReader(tc.in))},
			{"anymcp/bytewise", withAnymcp(iotest.OneByteReader(strings.NewReader(tc.in)))},
			{"go-sse", withGoSSE(strings.NewReader(tc.in))},
			{"go-sse/bytewise", withGoSSE(iotest.OneByteReader(strings.NewReader(tc.in)))},
			{"r3labs", withR3labs(tc.in)},
		}
		for _, r := range results {
			var diffs []string
			if !sameEvents(r.got.events, want.events) {
				diffs = append(diffs, fmt.Sprintf("events %v, want %v", r.got.events, want.events))
			}
			if r.got.lastID != "?" && r.got.lastID != want.lastID {
				diffs = append(diffs, fmt.Sprintf("last event ID %q, want %q", r.got.lastID, want.lastID))
			}
			if r.got.retry != "?" && r.got.retry != want.retry {
				diffs = append(diffs, fmt.Sprintf("retry %s, want %s", r.got.retry, want.retry))
			}
			if r.got.err != nil {
				diffs = append(diffs, fmt.Sprintf("error %v", r.got.err))
			}
			if len(diffs) == 0 {
				continue
			}
			fmt.Fprintf(&report, "%-34s %-16s %s\n", tc.name, r.name, strings.Join(diffs, "; "))
			if strings.HasPrefix(r.name, "anymcp") {
				t.Errorf("%s: %s: %s", tc.name, r.name, strings.Join(diffs, "; "))
			}
		}
	}
	t.Logf("departures from WHATWG (case, parser, what):\n%s", report.String())
}

package sse_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/anymcp/anymcp/sse"
)

// ev is a short way to write an expected event.
func ev(typ, data, id string) sse.Event {
	return sse.Event{Type: typ, Data: []byte(data), ID: id}
}

// result is everything a stream produced.
type result struct {
	events  []sse.Event
	lastID  string
	retry   time.Duration
	retryOK bool
	err     error
}

// readAll drains a Reader.
func readAll(src io.Reader, limit int) result {
	r := sse.NewReader(src, limit)
	var res result
	for {
		e, err := r.Next()
		if err != nil {
			res.err = err
			break
		}
		res.events = append(res.events, e)
	}
	res.lastID = r.LastEventID()
	res.retry, res.retryOK = r.Retry()
	return res
}

// chunkReader returns its chunks one per Read call.
type chunkReader struct{ chunks [][]byte }

func (c *chunkReader) Read(p []byte) (int, error) {
	for len(c.chunks) > 0 && len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	c.chunks[0] = c.chunks[0][n:]
	return n, nil
}

func chunks(parts ...string) io.Reader {
	c := &chunkReader{}
	for _, p := range parts {
		c.chunks = append(c.chunks, []byte(p))
	}
	return c
}

// readers are the ways each table case is fed to the parser.
var readers = []struct {
	name string
	wrap func(string) io.Reader
}{
	{"whole", func(s string) io.Reader { return strings.NewReader(s) }},
	{"byte-by-byte", func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) }},
	{"halves", func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) }},
	{"data-with-eof", func(s string) io.Reader { return iotest.DataErrReader(strings.NewReader(s)) }},
}

func sameEvents(a, b []sse.Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type != b[i].Type || a[i].ID != b[i].ID || !bytes.Equal(a[i].Data, b[i].Data) {
			return false
		}
	}
	return true
}

func fmtEvents(evs []sse.Event) string {
	var sb strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&sb, "{%q %q %q} ", e.Type, e.Data, e.ID)
	}
	return sb.String()
}

func TestNext(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []sse.Event
		lastID  string
		retry   time.Duration
		retryOK bool
	}{
		{name: "empty stream", in: ""},
		{name: "LF", in: "data: hello\n\n", want: []sse.Event{ev("message", "hello", "")}},
		{name: "CRLF", in: "data: hello\r\n\r\n", want: []sse.Event{ev("message", "hello", "")}},
		{name: "CR", in: "data: hello\r\r", want: []sse.Event{ev("message", "hello", "")}},
		{
			name: "mixed line endings",
			in:   "data: a\rdata: b\r\ndata: c\n\r\nevent: x\ndata: d\r\rdata: e\n\n",
			want: []sse.Event{ev("message", "a\nb\nc", ""), ev("x", "d", ""), ev("message", "e", "")},
		},
		{
			name: "LF CR is two line ends",
			in:   "data: a\n\rdata: b\n\n",
			want: []sse.Event{ev("message", "a", ""), ev("message", "b", "")},
		},
		{
			name: "CR CR LF is a blank line",
			in:   "data: a\r\r\ndata: b\n\n",
			want: []sse.Event{ev("message", "a", ""), ev("message", "b", "")},
		},
		{
			name: "several events",
			in:   "data: 1\n\ndata: 2\n\ndata: 3\n\n",
			want: []sse.Event{ev("message", "1", ""), ev("message", "2", ""), ev("message", "3", "")},
		},
		{
			name: "extra blank lines dispatch nothing",
			in:   "\n\n\ndata: 1\n\n\n\n",
			want: []sse.Event{ev("message", "1", "")},
		},
		{
			name: "comments",
			in:   ": keep-alive\ndata: a\n:another comment\n: data: not data\n\n:\n\n",
			want: []sse.Event{ev("message", "a", "")},
		},
		{
			name: "multi-line data",
			in:   "data: line1\ndata: line2\ndata:line3\ndata:  indented\n\n",
			want: []sse.Event{ev("message", "line1\nline2\nline3\n indented", "")},
		},
		{
			name: "only one leading space is removed",
			in:   "data:  two\n\ndata:\tTab\n\n",
			want: []sse.Event{ev("message", " two", ""), ev("message", "\tTab", "")},
		},
		{
			name: "value keeps later colons",
			in:   "data: {\"a\":1}\nevent: ns:kind\n\n",
			want: []sse.Event{ev("ns:kind", "{\"a\":1}", "")},
		},
		{
			name: "trailing whitespace kept",
			in:   "data: a \n\n",
			want: []sse.Event{ev("message", "a ", "")},
		},
		{
			name: "empty data line dispatches empty data",
			in:   "data:\n\ndata\n\n",
			want: []sse.Event{ev("message", "", ""), ev("message", "", "")},
		},
		{
			name: "two empty data lines give one newline",
			in:   "data\ndata\n\n",
			want: []sse.Event{ev("message", "\n", "")},
		},
		{
			name:   "priming event without data is not dispatched",
			in:     "id: prime-1\n\n",
			lastID: "prime-1",
		},
		{
			name:    "priming event with retry then message",
			in:      "id: 7\nretry: 3000\n\ndata: {}\n\n",
			want:    []sse.Event{ev("message", "{}", "7")},
			lastID:  "7",
			retry:   3 * time.Second,
			retryOK: true,
		},
		{
			name:   "priming event with an empty data field is dispatched (WHATWG)",
			in:     "id: 1\ndata:\n\n",
			want:   []sse.Event{ev("message", "", "1")},
			lastID: "1",
		},
		{
			name:   "id persists across events",
			in:     "id: 1\ndata: a\n\ndata: b\n\nid: 2\ndata: c\n\n",
			want:   []sse.Event{ev("message", "a", "1"), ev("message", "b", "1"), ev("message", "c", "2")},
			lastID: "2",
		},
		{
			name:   "empty id resets the last event ID",
			in:     "id: 1\ndata: a\n\nid\ndata: b\n\nid: 3\ndata: c\n\nid:\ndata: d\n\n",
			want:   []sse.Event{ev("message", "a", "1"), ev("message", "b", ""), ev("message", "c", "3"), ev("message", "d", "")},
			lastID: "",
		},
		{
			name:   "id with NUL is ignored",
			in:     "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n",
			want:   []sse.Event{ev("message", "a", "1"), ev("message", "b", "1")},
			lastID: "1",
		},
		{
			name: "NUL in data is kept",
			in:   "data: a\x00b\n\n",
			want: []sse.Event{ev("message", "a\x00b", "")},
		},
		{
			name:   "id of an undispatched event still counts",
			in:     "data: a\n\nid: 9\nevent: ignored\n\ndata: b\n\n",
			want:   []sse.Event{ev("message", "a", ""), ev("message", "b", "9")},
			lastID: "9",
		},
		{
			name:   "id set mid-event applies to that event",
			in:     "data: a\nid: 5\ndata: b\n\n",
			want:   []sse.Event{ev("message", "a\nb", "5")},
			lastID: "5",
		},
		{name: "retry valid", in: "retry: 1500\n\n", retry: 1500 * time.Millisecond, retryOK: true},
		{name: "retry zero", in: "retry: 0\n\n", retry: 0, retryOK: true},
		{name: "retry leading zeros", in: "retry:007\n", retry: 7 * time.Millisecond, retryOK: true},
		{name: "retry invalid: letters", in: "retry: 10s\n\n"},
		{name: "retry invalid: sign", in: "retry: -10\n\n"},
		{name: "retry invalid: plus", in: "retry: +10\n\n"},
		{name: "retry invalid: decimal", in: "retry: 1.5\n\n"},
		{name: "retry invalid: inner space", in: "retry: 1 0\n\n"},
		{name: "retry invalid: trailing space", in: "retry: 10 \n\n"},
		{name: "retry invalid: empty", in: "retry:\nretry\n\n"},
		{name: "retry invalid: non-ASCII digit", in: "retry: \u0661\u0662\n\n"},
		{
			name:    "retry invalid keeps the earlier value",
			in:      "retry: 100\nretry: x\n\n",
			retry:   100 * time.Millisecond,
			retryOK: true,
		},
		{
			name:    "retry huge is clamped",
			in:      "retry: 99999999999999999999999999\n\n",
			retry:   time.Duration(1<<63 - 1),
			retryOK: true,
		},
		{
			name: "unknown fields are ignored",
			in:   "foo: bar\nData: no\nDATA: no\nevents: no\n data: no\ndata: yes\nx\n\n",
			want: []sse.Event{ev("message", "yes", "")},
		},
		{
			name: "field without colon",
			in:   "data\n\nevent\ndata: x\n\n",
			want: []sse.Event{ev("message", "", ""), ev("message", "x", "")},
		},
		{
			name: "event type",
			in:   "event: endpoint\ndata: /messages?s=1\n\ndata: next\n\n",
			want: []sse.Event{ev("endpoint", "/messages?s=1", ""), ev("message", "next", "")},
		},
		{
			name: "empty event type means message",
			in:   "event: x\nevent:\ndata: a\n\n",
			want: []sse.Event{ev("message", "a", "")},
		},
		{
			name: "last event type wins",
			in:   "event: a\nevent: b\ndata: 1\n\n",
			want: []sse.Event{ev("b", "1", "")},
		},
		{
			name: "type is reset by an undispatched event",
			in:   "event: lost\n\ndata: a\n\n",
			want: []sse.Event{ev("message", "a", "")},
		},
		{
			name: "repeated event type",
			in:   "event: t\ndata: 1\n\nevent: t\ndata: 2\n\nevent: u\ndata: 3\n\nevent: t\ndata: 4\n\n",
			want: []sse.Event{ev("t", "1", ""), ev("t", "2", ""), ev("u", "3", ""), ev("t", "4", "")},
		},
		{
			name: "BOM is skipped",
			in:   "\ufeffdata: a\n\n",
			want: []sse.Event{ev("message", "a", "")},
		},
		{
			name: "BOM is skipped only once",
			in:   "\ufeff\ufeffdata: a\n\ndata: b\n\n",
			want: []sse.Event{ev("message", "b", "")},
		},
		{
			name: "BOM later in the stream is not skipped",
			in:   "data: a\n\n\ufeffdata: b\n\ndata: c\n\n",
			want: []sse.Event{ev("message", "a", ""), ev("message", "c", "")},
		},
		{
			name: "partial BOM is content",
			in:   "\xef\xbbdata: a\n\ndata: b\n\n",
			want: []sse.Event{ev("message", "b", "")},
		},
		{
			name: "BOM alone",
			in:   "\ufeff",
		},
		{
			name: "EOF without trailing blank line discards the event",
			in:   "data: a\n\ndata: b\n",
			want: []sse.Event{ev("message", "a", "")},
		},
		{
			name: "EOF in the middle of a line",
			in:   "data: a\n\ndata: b",
			want: []sse.Event{ev("message", "a", "")},
		},
		{
			name:   "complete id line before EOF still counts",
			in:     "data: a\n\nid: 4\ndata: b\n",
			want:   []sse.Event{ev("message", "a", "")},
			lastID: "4",
		},
		{
			name: "incomplete id line at EOF is dropped",
			in:   "data: a\n\nid: 4",
			want: []sse.Event{ev("message", "a", "")},
		},
		{
			name: "invalid UTF-8 passes through",
			in:   "event: \xff\ndata: \xc3\x28\n\n",
			want: []sse.Event{ev("\xff", "\xc3\x28", "")},
		},
		{
			name: "JSON-RPC message event",
			in: "event: message\nid: s1-42\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n" +
				"event: message\nid: s1-43\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n",
			want: []sse.Event{
				ev("message", `{"jsonrpc":"2.0","id":1,"result":{}}`, "s1-42"),
				ev("message", `{"jsonrpc":"2.0","method":"notifications/progress"}`, "s1-43"),
			},
			lastID: "s1-43",
		},
	}
	for _, tc := range tests {
		for _, rd := range readers {
			t.Run(tc.name+"/"+rd.name, func(t *testing.T) {
				got := readAll(rd.wrap(tc.in), 0)
				if got.err != io.EOF {
					t.Fatalf("err = %v, want io.EOF", got.err)
				}
				if !sameEvents(got.events, tc.want) {
					t.Errorf("events:\n got %s\nwant %s", fmtEvents(got.events), fmtEvents(tc.want))
				}
				if got.lastID != tc.lastID {
					t.Errorf("LastEventID = %q, want %q", got.lastID, tc.lastID)
				}
				if got.retry != tc.retry || got.retryOK != tc.retryOK {
					t.Errorf("Retry = %v, %v; want %v, %v", got.retry, got.retryOK, tc.retry, tc.retryOK)
				}
			})
		}
	}
}

// TestEverySplit feeds streams in two reads split at every possible point,
// which puts a CR and its LF in different reads wherever they occur.
func TestEverySplit(t *testing.T) {
	inputs := []string{
		"\ufeffdata: a\r\ndata: b\r\n\r\nid: 1\r\n\r\nevent: e\rdata: c\r\r",
		"data:x\r\n\r\ndata:y\n\rdata:z\r\r\n:c\r\nretry: 12\r\n\r\n",
		"id: 1\x00\rid: 2\r\ndata\r\rdata: a\r\nevent: x\r\n\r\n",
	}
	for _, in := range inputs {
		want := readAll(strings.NewReader(in), 0)
		for i := 0; i <= len(in); i++ {
			got := readAll(chunks(in[:i], in[i:]), 0)
			if !sameEvents(got.events, want.events) || got.lastID != want.lastID ||
				got.retry != want.retry || got.retryOK != want.retryOK || got.err != io.EOF {
				t.Fatalf("split %q | %q:\n got %s id=%q retry=%v err=%v\nwant %s id=%q retry=%v",
					in[:i], in[i:], fmtEvents(got.events), got.lastID, got.retry, got.err,
					fmtEvents(want.events), want.lastID, want.retry)
			}
		}
	}
}

func TestCRLFSplitAcrossReads(t *testing.T) {
	// If the LF that follows a CR at the end of a read were taken as a line
	// end of its own, "a" would be dispatched alone, before "b" arrives.
	got := readAll(chunks("data: a\r", "\ndata: b\r", "\n\r", "\n"), 0)
	want := []sse.Event{ev("message", "a\nb", "")}
	if !sameEvents(got.events, want) {
		t.Fatalf("got %s, want %s", fmtEvents(got.events), fmtEvents(want))
	}
	// A CR at the end of a read followed by a read starting with something
	// else is a line end by itself.
	got = readAll(chunks("data: a\r", "\r", "data: b\r", "\r"), 0)
	want = []sse.Event{ev("message", "a", ""), ev("message", "b", "")}
	if !sameEvents(got.events, want) {
		t.Fatalf("got %s, want %s", fmtEvents(got.events), fmtEvents(want))
	}
}

func TestLongLinesAcrossReads(t *testing.T) {
	big := strings.Repeat("x", 100<<10) // longer than the internal read buffer
	tests := []struct {
		name   string
		in     string
		want   []sse.Event
		lastID string
	}{
		{"long data", "data: " + big + "\n\n", []sse.Event{ev("message", big, "")}, ""},
		{"long data, no space", "data:" + big + "\r\n\r\n", []sse.Event{ev("message", big, "")}, ""},
		{"long multi-line data", "data: " + big + "\ndata: " + big + "\r\r", []sse.Event{ev("message", big+"\n"+big, "")}, ""},
		{"long comment", ":" + big + "\ndata: a\n\n", []sse.Event{ev("message", "a", "")}, ""},
		{"long unknown field", "zzz: " + big + "\ndata: a\n\n", []sse.Event{ev("message", "a", "")}, ""},
		{"long field name", big + "\ndata: a\n\n", []sse.Event{ev("message", "a", "")}, ""},
		{"long id", "id: " + big + "\ndata: a\n\n", []sse.Event{ev("message", "a", big)}, big},
		{"long event type", "event: " + big + "\ndata: a\n\n", []sse.Event{ev(big, "a", "")}, ""},
		{"long data then EOF", "data: " + big, nil, ""},
	}
	for _, tc := range tests {
		for _, rd := range readers {
			if rd.name == "byte-by-byte" {
				continue // covered by the fuzz seeds; slow here
			}
			t.Run(tc.name+"/"+rd.name, func(t *testing.T) {
				got := readAll(rd.wrap(tc.in), 0)
				if got.err != io.EOF {
					t.Fatalf("err = %v", got.err)
				}
				if !sameEvents(got.events, tc.want) {
					t.Errorf("got %d events, want %d (or data differs)", len(got.events), len(tc.want))
				}
				if got.lastID != tc.lastID {
					t.Errorf("LastEventID has %d bytes, want %d", len(got.lastID), len(tc.lastID))
				}
			})
		}
	}
}

// endless repeats a pattern forever and counts the bytes it handed out.
type endless struct {
	prefix  []byte
	pattern byte
	n       int
}

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	if len(e.prefix) > 0 {
		n = copy(p, e.prefix)
		e.prefix = e.prefix[n:]
	}
	for i := n; i < len(p); i++ {
		p[i] = e.pattern
	}
	e.n += len(p)
	return len(p), nil
}

func TestEventTooLarge(t *testing.T) {
	const limit = 1000
	line := "data: " + strings.Repeat("y", 99) + "\n" // 99 data bytes per line
	tests := []struct {
		name string
		in   string
		ok   int // events expected before the error
	}{
		{"many data lines", strings.Repeat(line, 20) + "\n", 0},
		{"one long data line", "data: " + strings.Repeat("z", limit+1) + "\n\n", 0},
		{"second event too large", "data: small\n\n" + strings.Repeat(line, 11) + "\n", 1},
		{"long comment", ":" + strings.Repeat("c", limit+1) + "\n\n", 0},
		{"long id", "id: " + strings.Repeat("i", limit+1) + "\n\n", 0},
		{"long unknown field", "x: " + strings.Repeat("u", limit+1) + "\n\n", 0},
		{"long line without colon", strings.Repeat("n", limit+1) + "\n\n", 0},
		{"data plus long id", strings.Repeat(line, 9) + "id: " + strings.Repeat("i", 200) + "\n\n", 0},
	}
	for _, tc := range tests {
		for _, rd := range readers {
			t.Run(tc.name+"/"+rd.name, func(t *testing.T) {
				got := readAll(rd.wrap(tc.in), limit)
				if !errors.Is(got.err, sse.ErrEventTooLarge) {
					t.Fatalf("err = %v, want ErrEventTooLarge", got.err)
				}
				var tl *sse.EventTooLargeError
				if !errors.As(got.err, &tl) || tl.Limit != limit {
					t.Fatalf("err = %#v, want *EventTooLargeError{Limit: %d}", got.err, limit)
				}
				if !strings.Contains(got.err.Error(), "1000") {
					t.Errorf("message %q does not name the limit", got.err)
				}
				if len(got.events) != tc.ok {
					t.Errorf("got %d events before the error, want %d", len(got.events), tc.ok)
				}
			})
		}
	}
}

func TestEventWithinLimit(t *testing.T) {
	const limit = 64
	exact := strings.Repeat("a", limit)
	// Newlines between data lines count; the trailing one does not.
	multi := strings.Repeat("b", 31) + "\n" + strings.Repeat("c", 32)
	in := "data: " + exact + "\n\n" +
		"data: " + multi[:31] + "\ndata: " + multi[32:] + "\n\n" +
		":" + strings.Repeat("d", limit-1) + "\n" +
		"id: " + strings.Repeat("e", limit-4) + "\n\n"
	for _, rd := range readers {
		t.Run(rd.name, func(t *testing.T) {
			got := readAll(rd.wrap(in), limit)
			if got.err != io.EOF {
				t.Fatalf("err = %v, want io.EOF", got.err)
			}
			want := []sse.Event{ev("message", exact, ""), ev("message", multi, "")}
			if !sameEvents(got.events, want) {
				t.Fatalf("got %s", fmtEvents(got.events))
			}
		})
	}
	got := readAll(strings.NewReader("data: "+exact+"x\n\n"), limit)
	if !errors.Is(got.err, sse.ErrEventTooLarge) {
		t.Fatalf("limit+1 bytes: err = %v", got.err)
	}
}

// TestEventTooLargePromptly checks that an endless line is refused after
// reading not much more than the limit.
func TestEventTooLargePromptly(t *testing.T) {
	const limit = 1 << 20
	tests := []struct {
		name   string
		prefix string
		fill   byte
	}{
		{"endless data line", "data: ", 'x'},
		{"endless comment", ":", 'x'},
		{"endless field name", "", 'x'},
		{"endless id", "id:", 'x'},
		{"endless unknown field", "foo:", 'x'},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := &endless{prefix: []byte(tc.prefix), pattern: tc.fill}
			r := sse.NewReader(src, limit)
			_, err := r.Next()
			if !errors.Is(err, sse.ErrEventTooLarge) {
				t.Fatalf("err = %v, want ErrEventTooLarge", err)
			}
			if src.n > limit+128<<10 {
				t.Errorf("read %d bytes before failing; limit is %d", src.n, limit)
			}
		})
	}
	t.Run("endless empty data lines", func(t *testing.T) {
		src := &repeater{pattern: []byte("data\n")}
		r := sse.NewReader(src, limit)
		_, err := r.Next()
		if !errors.Is(err, sse.ErrEventTooLarge) {
			t.Fatalf("err = %v, want ErrEventTooLarge", err)
		}
		// Each "data\n" line adds one newline to the data buffer.
		if src.n > 5*(limit+1)+128<<10 {
			t.Errorf("read %d bytes before failing", src.n)
		}
	})
	t.Run("default limit", func(t *testing.T) {
		if testing.Short() {
			t.Skip("reads 64 MiB")
		}
		for _, max := range []int{0, -1} {
			src := &endless{prefix: []byte("data: "), pattern: 'x'}
			_, err := sse.NewReader(src, max).Next()
			var tl *sse.EventTooLargeError
			if !errors.As(err, &tl) || tl.Limit != sse.DefaultMaxEventSize {
				t.Fatalf("max %d: err = %v, want limit %d", max, err, sse.DefaultMaxEventSize)
			}
		}
	})
}

// repeater repeats a pattern forever and counts the bytes it handed out.
type repeater struct {
	pattern []byte
	off     int
	n       int
}

func (r *repeater) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = r.pattern[r.off]
		r.off = (r.off + 1) % len(r.pattern)
	}
	r.n += len(p)
	return len(p), nil
}

func TestErrorsAreSticky(t *testing.T) {
	r := sse.NewReader(strings.NewReader("data: "+strings.Repeat("x", 100)+"\n\ndata: ok\n\n"), 10)
	_, err1 := r.Next()
	_, err2 := r.Next()
	if !errors.Is(err1, sse.ErrEventTooLarge) || err1 != err2 {
		t.Fatalf("errors %v, %v; want the same ErrEventTooLarge twice", err1, err2)
	}
	r = sse.NewReader(strings.NewReader("data: a\n\n"), 0)
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("err = %v, want io.EOF", err)
		}
	}
}

func TestReaderErrorPassedThrough(t *testing.T) {
	boom := errors.New("connection reset")
	tests := []struct {
		name string
		src  io.Reader
		want []sse.Event
	}{
		{"immediately", iotest.ErrReader(boom), nil},
		{
			"after an event and half a line",
			io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom)),
			[]sse.Event{ev("message", "a", "")},
		},
		{
			"with data in the same read",
			&errAfter{data: []byte("data: a\n\ndata: b\n"), err: boom},
			[]sse.Event{ev("message", "a", "")},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := readAll(tc.src, 0)
			if got.err != boom {
				t.Fatalf("err = %v, want the reader's error as is", got.err)
			}
			if !sameEvents(got.events, tc.want) {
				t.Errorf("got %s, want %s", fmtEvents(got.events), fmtEvents(tc.want))
			}
		})
	}
	t.Run("timeout", func(t *testing.T) {
		// TimeoutReader hands out all the data, then fails the second read.
		got := readAll(iotest.TimeoutReader(strings.NewReader("data: a\n\ndata: b\n\n")), 0)
		if got.err != iotest.ErrTimeout {
			t.Fatalf("err = %v, want iotest.ErrTimeout", got.err)
		}
		if want := []sse.Event{ev("message", "a", ""), ev("message", "b", "")}; !sameEvents(got.events, want) {
			t.Errorf("got %s, want %s", fmtEvents(got.events), fmtEvents(want))
		}
	})
}

// errAfter returns its data and its error from the same Read call.
type errAfter struct {
	data []byte
	err  error
}

func (e *errAfter) Read(p []byte) (int, error) {
	n := copy(p, e.data)
	e.data = e.data[n:]
	if len(e.data) == 0 {
		return n, e.err
	}
	return n, nil
}

type stuckReader struct{}

func (stuckReader) Read([]byte) (int, error) { return 0, nil }

func TestNoProgress(t *testing.T) {
	_, err := sse.NewReader(stuckReader{}, 0).Next()
	if err != io.ErrNoProgress {
		t.Fatalf("err = %v, want io.ErrNoProgress", err)
	}
}

func TestEmptyReadsAreTolerated(t *testing.T) {
	c := &chunkReader{}
	for _, part := range []string{"da", "ta: a", "\r", "\n", "\n"} {
		c.chunks = append(c.chunks, []byte(part))
	}
	got := readAll(&emptyBetween{r: c}, 0)
	if want := []sse.Event{ev("message", "a", "")}; got.err != io.EOF || !sameEvents(got.events, want) {
		t.Fatalf("got %s, %v", fmtEvents(got.events), got.err)
	}
}

// emptyBetween returns (0, nil) before every real read.
type emptyBetween struct {
	r     io.Reader
	flips bool
}

func (e *emptyBetween) Read(p []byte) (int, error) {
	e.flips = !e.flips
	if e.flips {
		return 0, nil
	}
	return e.r.Read(p)
}

func TestDataIsOwnedByCaller(t *testing.T) {
	big := strings.Repeat("B", 200<<10)
	r := sse.NewReader(strings.NewReader("data: one\n\ndata: two\n\ndata: "+big+"\n\ndata: three\n\n"), 0)
	var evs []sse.Event
	for {
		e, err := r.Next()
		if err != nil {
			break
		}
		evs = append(evs, e)
	}
	if len(evs) != 4 {
		t.Fatalf("got %d events", len(evs))
	}
	for i := range evs[0].Data {
		evs[0].Data[i] = '!'
	}
	if string(evs[1].Data) != "two" || string(evs[3].Data) != "three" || string(evs[2].Data) != big {
		t.Fatalf("events share memory: %q %q", evs[1].Data, evs[3].Data)
	}
	// Appending to one event's data must not write into another's.
	_ = append(evs[1].Data, "XXXX"...)
	_ = append(evs[2].Data, "XXXX"...)
	if string(evs[3].Data) != "three" {
		t.Fatalf("append leaked into a later event: %q", evs[3].Data)
	}
}

func TestAllocations(t *testing.T) {
	// A stream of identical events, repeated forever.
	one := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n"
	r := sse.NewReader(&repeater{pattern: []byte(one)}, 0)
	if _, err := r.Next(); err != nil { // warm up the buffers
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Errorf("%v allocations per event, want at most 1 (the data)", allocs)
	}
	// With a new id on each event, one more for the id string.
	var sb strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&sb, "id: %d\n%s", i, one)
	}
	r = sse.NewReader(strings.NewReader(sb.String()), 0)
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	allocs = testing.AllocsPerRun(1000, func() {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 2 {
		t.Errorf("%v allocations per event with ids, want at most 2", allocs)
	}
}

func ExampleReader() {
	body := strings.NewReader(": stream opened\n" +
		"id: 1\nretry: 2000\n\n" + // a priming event: no data, not dispatched
		"event: message\nid: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
	r := sse.NewReader(body, 0)
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		} else if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Printf("%s %s %s\n", e.Type, e.ID, e.Data)
	}
	retry, _ := r.Retry()
	fmt.Println("resume from", r.LastEventID(), "after", retry)
	// Output:
	// message 2 {"jsonrpc":"2.0","id":1,"result":{}}
	// resume from 2 after 2s
}

// TestResumeID: the id to resume from is the one in force at the last
// blank line — a priming event's too — never that of an event the stream
// stopped in the middle of, whether it ended cleanly or broke.
func TestResumeID(t *testing.T) {
	tests := []struct {
		stream  string
		src     func(string) io.Reader
		last    string // LastEventID
		resume  string // ResumeID
		wantErr error
	}{
		{"id: a\ndata: x\n\nid: p\n\nid: b\ndata: partial", func(s string) io.Reader { return strings.NewReader(s) }, "b", "p", io.EOF},
		{"id: a\ndata: x\n\nid: b\ndata: y\n", func(s string) io.Reader { return strings.NewReader(s) }, "b", "a", io.EOF},
		{"id: a\ndata: x\n\nid: b\ndata: y\n\n", func(s string) io.Reader { return strings.NewReader(s) }, "b", "b", io.EOF},
		{"id: a\ndata: x\n\nid: b\nda", func(s string) io.Reader {
			return io.MultiReader(strings.NewReader(s), iotest.ErrReader(io.ErrUnexpectedEOF))
		}, "b", "a", io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		rd := sse.NewReader(tt.src(tt.stream), 1<<20)
		var err error
		for err == nil {
			_, err = rd.Next()
		}
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("%q: Next ended with %v, want %v", tt.stream, err, tt.wantErr)
		}
		if rd.LastEventID() != tt.last || rd.ResumeID() != tt.resume {
			t.Errorf("%q: LastEventID %q, ResumeID %q; want %q, %q", tt.stream, rd.LastEventID(), rd.ResumeID(), tt.last, tt.resume)
		}
	}
}

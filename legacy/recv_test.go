package legacy

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/httpopt"
	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/internal/wire"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/sse"
)

// TestRecvOrder: the messages of the stream, a batch split into its
// members, reach Recv in the order they were sent.
func TestRecvOrder(t *testing.T) {
	s := newSSEServer(t)
	s.onGET = func(send func(string)) {
		send(messageEvent(note("notifications/a")))
		send(messageEvent(`{"jsonrpc":"2.0","id":"r1","method":"roots/list"}`))
		send(messageEvent(`[` + note("notifications/b") + `,` + response("7", `{"x":1}`) + `]`))
		send("data: " + note("notifications/unnamed") + "\n\n") // no event field: "message"
		for i := range 200 {
			send(messageEvent(note(fmt.Sprintf("n/%d", i))))
		}
	}
	_, loop := dial(t, s.URL+"/sse", Options{})
	want := []string{
		"notification notifications/a",
		`request roots/list "r1"`,
		"notification notifications/b",
		`response 7 {"x":1}`,
		"notification notifications/unnamed",
	}
	for i := range 200 {
		want = append(want, fmt.Sprintf("notification n/%d", i))
	}
	for i, w := range want {
		if got := describe(loop.next(t)); got != w {
			t.Fatalf("message %d is %s, want %s", i, got, w)
		}
	}
}

// TestRecvIgnores: events of other types, later endpoint events, empty
// messages and invalid JSON are dropped (logged) and what follows them is
// delivered; the first endpoint stays in use. The log names an ignored
// endpoint redacted: its query holds a session id.
func TestRecvIgnores(t *testing.T) {
	s := newSSEServer(t)
	s.onGET = func(send func(string)) {
		send("event: ping\ndata: {}\n\n")
		send(": a comment\n\n")
		send(endpointEvent("/elsewhere?sessionId=s2-secret&BareKey#frag-secret"))
		send("event: message\ndata:\n\n")
		send(messageEvent("{not json"))
		send(messageEvent(`{"jsonrpc":"1.0","method":"old"}`))
		send(messageEvent(`[` + note("notifications/good") + `,{"jsonrpc":"2.0"}]`))
		send(messageEvent(note("notifications/last")))
	}
	var rec logs
	tr, loop := dial(t, s.URL+"/sse", Options{Common: httpopt.Common{Logger: slog.New(&rec)}})
	for _, w := range []string{"notification notifications/good", "notification notifications/last"} {
		if got := describe(loop.next(t)); got != w {
			t.Fatalf("got %s, want %s", got, w)
		}
	}
	send(t, tr, notification("notifications/initialized"))
	if got := s.Requests()[1].Path; got != "/message?sessionId=s1" {
		t.Errorf("POST went to %s, want the first endpoint", got)
	}
	if warns := rec.Messages(slog.LevelWarn); len(warns) != 3 {
		t.Errorf("warnings %q, want 3 (invalid JSON, invalid JSON-RPC, invalid batch member)", warns)
	}
	debug := strings.Join(rec.Messages(slog.LevelDebug), "\n")
	for _, w := range []string{"ignored an event", "ignored a later endpoint event", "without data"} {
		if !strings.Contains(debug, w) {
			t.Errorf("no debug record %q in\n%s", w, debug)
		}
	}
	if got := rec.Attrs("legacy: ignored a later endpoint event; keeping the first")["ignored"]; got != "/elsewhere?sessionId=…&…" {
		t.Errorf("the ignored endpoint is logged as %q, want it redacted", got)
	}
	for _, r := range rec.Flat() {
		for k, v := range r {
			for _, secret := range []string{"sessionId=s1", "s2-secret", "BareKey", "frag-secret"} {
				if strings.Contains(v, secret) {
					t.Errorf("the log record %q shows %q in %s: %q", r["msg"], secret, k, v)
				}
			}
		}
	}
}

// TestRecvBoundedWarning: the warning about invalid input holds a bounded
// excerpt of it, not all of it.
func TestRecvBoundedWarning(t *testing.T) {
	s := newSSEServer(t)
	s.onGET = func(send func(string)) {
		send(messageEvent("{" + strings.Repeat("x", 100000)))
		send(messageEvent(note("notifications/after")))
	}
	var rec logs
	_, loop := dial(t, s.URL+"/sse", Options{Common: httpopt.Common{Logger: slog.New(&rec)}})
	loop.next(t)
	for _, r := range rec.Records() {
		r.Attrs(func(a slog.Attr) bool {
			if n := len(a.Value.String()); n > 600 {
				t.Errorf("log attribute %s holds %d bytes", a.Key, n)
			}
			return true
		})
	}
}

// TestStreamEnd: without reconnection, when the server ends the stream,
// Recv returns what was queued and then ErrConnectionLost, Send fails
// without a POST, and Close turns both into ErrClosed.
func TestStreamEnd(t *testing.T) {
	s := newSSEServer(t)
	s.onGET = func(send func(string)) {
		send(messageEvent(note("notifications/one")))
		send(messageEvent(note("notifications/two")))
	}
	s.end = make(chan struct{})
	close(s.end)
	tr, err := Dial(t.Context(), s.URL+"/sse", Options{NoReconnect: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	closed(t, "the stream to end", s.gone)
	// The messages sent before the end are not lost to the end.
	testkit.Eventually(t, wait, "the end to be seen", func() bool { return tr.ctx.Err() != nil })
	for _, w := range []string{"notification notifications/one", "notification notifications/two"} {
		m, err := tr.Recv()
		if err != nil || describe(m) != w {
			t.Fatalf("Recv = %v, %v; want %s", m, err, w)
		}
	}
	for range 2 {
		_, err = tr.Recv()
		if !errors.Is(err, ErrConnectionLost) || errors.Is(err, jsonrpc.ErrClosed) {
			t.Fatalf("Recv = %v, want ErrConnectionLost", err)
		}
	}
	if err := sendErr(tr, request(2, "tools/list")); !errors.Is(err, ErrConnectionLost) {
		t.Errorf("Send = %v, want ErrConnectionLost", err)
	}
	if n := s.Count(http.MethodPost); n != 0 {
		t.Errorf("%d POSTs after the stream ended", n)
	}
	tr.Close()
	if _, err := tr.Recv(); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("Recv after Close = %v, want ErrClosed", err)
	}
	if err := sendErr(tr, request(3, "tools/list")); !errors.Is(err, jsonrpc.ErrClosed) {
		t.Errorf("Send after Close = %v, want ErrClosed", err)
	}
}

// TestStreamBroken: without reconnection, a stream cut in the middle is
// ErrConnectionLost with the read error, and a POST in flight at that
// moment is given up: its outcome is unknown.
func TestStreamBroken(t *testing.T) {
	cut := make(chan struct{})
	posted := make(chan struct{})
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, _ []byte) {
		if r.Method == http.MethodPost {
			close(posted)
			<-r.Context().Done() // never answers
			return
		}
		send := startSSE(w)
		send(endpointEvent("/message"))
		<-cut
		send("event: message\ndata: {\"jsonrpc\":")
		panic(http.ErrAbortHandler) // drops the connection mid-event
	})
	tr, loop := dial(t, s.URL+"/sse", Options{NoReconnect: true})
	sent := make(chan error, 1)
	go func() { sent <- sendErr(tr, request(1, "tools/call")) }()
	closed(t, "the POST", posted)
	close(cut)
	err := loop.ended(t)
	if !errors.Is(err, ErrConnectionLost) || !strings.Contains(err.Error(), "broke") {
		t.Errorf("Recv = %v, want a broken stream", err)
	}
	select {
	case err := <-sent:
		if !errors.Is(err, ErrConnectionLost) || !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
			t.Errorf("Send = %v, want ErrConnectionLost and ErrOutcomeUnknown", err)
		}
	case <-time.After(wait):
		t.Fatal("Send still waiting after the stream broke")
	}
}

// TestEventTooLarge: MaxEventSize bounds an event; a bigger one ends the
// session (here, without reconnection, the transport) with an error that
// says so.
func TestEventTooLarge(t *testing.T) {
	s := newSSEServer(t)
	s.onGET = func(send func(string)) {
		send(messageEvent(note("notifications/small")))
		send(messageEvent(`{"jsonrpc":"2.0","method":"big","params":{"x":"` + strings.Repeat("x", 4096) + `"}}`))
	}
	_, loop := dial(t, s.URL+"/sse", Options{Common: httpopt.Common{MaxEventSize: 1024}, NoReconnect: true})
	loop.next(t)
	err := loop.ended(t)
	if !errors.Is(err, ErrConnectionLost) || !errors.Is(err, sse.ErrEventTooLarge) {
		t.Errorf("Recv = %v, want ErrConnectionLost and sse.ErrEventTooLarge", err)
	}
}

// TestCursorKept: the last event id and retry delay of the stream are
// kept when it ends.
func TestCursorKept(t *testing.T) {
	s := newSSEServer(t)
	s.onGET = func(send func(string)) {
		send("id: 41\nretry: 1500\n" + messageEvent(note("notifications/a")))
		send("id: 42\n\n")
	}
	s.end = make(chan struct{})
	close(s.end)
	tr, loop := dial(t, s.URL+"/sse", Options{NoReconnect: true})
	loop.next(t)
	loop.ended(t)
	tr.mu.Lock()
	cur := tr.cursor
	tr.mu.Unlock()
	if cur != (streamCursor{lastEventID: "42", retry: 1500 * time.Millisecond, hasRetry: true}) {
		t.Errorf("cursor = %+v", cur)
	}
}

// TestQueueBounded: while nobody calls Recv, the stream reader queues
// wire.MaxQueued messages and then stops reading; Recv then gets every
// message, in order.
func TestQueueBounded(t *testing.T) {
	const n = 5000
	s := newSSEServer(t)
	s.onGET = func(send func(string)) {
		var b strings.Builder
		for i := range n {
			b.WriteString(messageEvent(note(fmt.Sprintf("n/%d", i))))
		}
		send(b.String())
	}
	tr, err := Dial(t.Context(), s.URL+"/sse", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	testkit.Eventually(t, wait, "the queue to fill", func() bool {
		return tr.queue.Len() == wire.MaxQueued
	})
	got := make([]string, 0, n)
	for range n {
		m, err := tr.Recv()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, m.Method)
	}
	if !slices.IsSortedFunc(got, func(a, b string) int {
		var x, y int
		fmt.Sscanf(a, "n/%d", &x)
		fmt.Sscanf(b, "n/%d", &y)
		return x - y
	}) {
		t.Error("messages out of order")
	}
}

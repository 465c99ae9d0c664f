package modern

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/httpopt"
	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/jsonrpc"
)

const progressNote = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`

// resumable answers tools/call (id 5) with an event stream that the test
// breaks, then serves the GETs that resume it, one script per GET. Other
// messages get what mcp("s-r") gives them.
type resumable struct {
	post func(ev func(string)) // writes the POST stream; returning ends it
	gets []func(ev func(string))
}

func (rs *resumable) handler(t *testing.T) handler {
	var mu sync.Mutex
	n := 0
	return func(w http.ResponseWriter, r *http.Request, body []byte) {
		m, _ := jsonrpc.DecodeMessage(body)
		switch {
		case r.Method == http.MethodPost && m != nil && m.Method == "tools/call":
			rs.post(startSSE(w))
		case r.Method == http.MethodGet && r.Header.Get("Last-Event-Id") != "":
			mu.Lock()
			i := n
			n++
			mu.Unlock()
			if i >= len(rs.gets) {
				t.Errorf("resuming GET #%d: unexpected", i+1)
				w.WriteHeader(http.StatusGone)
				return
			}
			rs.gets[i](startSSE(w))
		default:
			mcp("s-r")(w, r, body)
		}
	}
}

// cut ends a handler with a connection reset: the stream breaks.
func cut() { panic(http.ErrAbortHandler) }

// lastEventIDs returns the Last-Event-ID of every GET that carried one.
func lastEventIDs(s *server) []string {
	var ids []string
	for _, r := range s.Requests() {
		if r.Method == http.MethodGet && r.Header.Get("Last-Event-Id") != "" {
			ids = append(ids, r.Header.Get("Last-Event-Id"))
		}
	}
	return ids
}

// TestResume: a request's event stream that breaks after events with ids
// is resumed by GETs with Last-Event-ID of the newest id, as often as it
// breaks, and the response reaches Recv once; the request is POSTed once.
func TestResume(t *testing.T) {
	tests := []struct {
		name    string
		rs      resumable
		wantIDs []string
		want    []string
	}{{
		name: "broken after two events",
		rs: resumable{
			post: func(ev func(string)) {
				ev("id: e1\ndata:\n\n")
				ev("id: e2\n" + data(progressNote))
				cut()
			},
			gets: []func(ev func(string)){func(ev func(string)) {
				ev("id: e3\n" + data(response("5", `{"n":1}`)))
			}},
		},
		wantIDs: []string{"e2"},
		want:    []string{"notification notifications/progress", `response 5 {"n":1}`},
	}, {
		name: "server closes after the priming event (polling)",
		rs: resumable{
			post: func(ev func(string)) { ev("id: p0\nretry: 5\ndata:\n\n") },
			gets: []func(ev func(string)){func(ev func(string)) {
				ev(data(response("5", `{"n":2}`)))
			}},
		},
		wantIDs: []string{"p0"},
		want:    []string{`response 5 {"n":2}`},
	}, {
		name: "broken twice",
		rs: resumable{
			post: func(ev func(string)) {
				ev("id: e1\n" + data(progressNote))
				cut()
			},
			gets: []func(ev func(string)){
				func(ev func(string)) {
					ev("id: e2\n" + data(progressNote))
					cut()
				},
				func(ev func(string)) {
					ev("id: e3\n" + data(response("5", `{"n":3}`)))
				},
			},
		},
		wantIDs: []string{"e1", "e2"},
		want:    []string{"notification notifications/progress", "notification notifications/progress", `response 5 {"n":3}`},
	}, {
		name: "broken in the middle of an event: resumed from the last whole one",
		rs: resumable{
			post: func(ev func(string)) {
				ev("id: e1\n" + data(progressNote))
				ev("id: e2\ndata: {\"jsonrpc\":\"2.0\",") // cut before its end
				cut()
			},
			gets: []func(ev func(string)){func(ev func(string)) {
				ev("id: e2\n" + data(response("5", `{"n":4}`)))
			}},
		},
		wantIDs: []string{"e1"},
		want:    []string{"notification notifications/progress", `response 5 {"n":4}`},
	}, {
		name: "ended cleanly in the middle of an event: resumed from the last whole one",
		rs: resumable{
			post: func(ev func(string)) {
				ev("id: e1\n" + data(progressNote))
				ev("id: e2\ndata: " + response("5", `{"n":7}`) + "\n") // no blank line: the stream ends here
			},
			gets: []func(ev func(string)){func(ev func(string)) {
				ev("id: e2\n" + data(response("5", `{"n":7}`)))
			}},
		},
		wantIDs: []string{"e1"},
		want:    []string{"notification notifications/progress", `response 5 {"n":7}`},
	}, {
		name: "a second response to the request is dropped",
		rs: resumable{
			post: func(ev func(string)) {
				ev("id: e1\ndata:\n\n")
				cut()
			},
			gets: []func(ev func(string)){func(ev func(string)) {
				ev("id: e2\n" + data("["+response("5", `{"n":5}`)+","+response("5", `{"n":6}`)+"]"))
			}},
		},
		wantIDs: []string{"e1"},
		want:    []string{`response 5 {"n":5}`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.rs.handler(t))
			l := &logs{}
			tr, ch := dial(t, s, Options{Common: httpopt.Common{Logger: slog.New(l), Reconnect: tiny()}})
			send(t, tr, initialize())
			next(t, ch)
			send(t, tr, request(5, "tools/call"))
			for i, want := range tt.want {
				if got := describe(next(t, ch)); got != want {
					t.Fatalf("message %d = %s, want %s", i, got, want)
				}
			}
			none(t, ch)
			if got := lastEventIDs(s); strings.Join(got, ",") != strings.Join(tt.wantIDs, ",") {
				t.Errorf("resumed with Last-Event-ID %q, want %q", got, tt.wantIDs)
			}
			for _, r := range s.Requests() {
				if r.Method == http.MethodGet && (r.Header.Get("Mcp-Session-Id") != "s-r" ||
					r.Header.Get("Mcp-Protocol-Version") != "2025-06-18" || r.Header.Get("Accept") != "text/event-stream") {
					t.Errorf("resuming GET headers: %v", r.Header)
				}
			}
			if n := s.Count(http.MethodPost); n != 2 { // initialize, tools/call
				t.Errorf("%d POSTs, want 2", n)
			}
			if n := len(l.Messages(slog.LevelInfo)); n < len(tt.wantIDs) {
				t.Errorf("%d info records, want one per resumption", n)
			}
		})
	}
}

// TestResumeFails: a stream that cannot be resumed fails the request with
// ErrOutcomeUnknown, and the request is never POSTed again.
func TestResumeFails(t *testing.T) {
	tests := []struct {
		name string
		post func(ev func(string))
		get  handler // nil: no GET expected
		gets int     // resuming GETs expected
		say  string  // in the error
	}{{
		name: "no event id",
		post: func(ev func(string)) {
			ev(data(progressNote))
			cut()
		},
		say: "ended before the response",
	}, {
		name: "the server cannot resume (405)",
		post: func(ev func(string)) {
			ev("id: e1\ndata:\n\n")
			cut()
		},
		get:  func(w http.ResponseWriter, _ *http.Request, _ []byte) { w.WriteHeader(http.StatusMethodNotAllowed) },
		gets: 1,
		say:  "cannot resume",
	}, {
		name: "resumption exhausted: the GET keeps failing",
		post: func(ev func(string)) { ev("id: e1\ndata:\n\n") },
		get: func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			http.Error(w, "busy", http.StatusInternalServerError)
		},
		gets: 3, // tiny: 3 attempts without progress
		say:  "resumption exhausted",
	}, {
		name: "resumption exhausted: no new event id",
		post: func(ev func(string)) { ev("id: e1\ndata:\n\n") },
		get: func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			ev := startSSE(w)
			ev(": nothing new\n\n")
		},
		gets: 3,
		say:  "resumption exhausted",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				if r.Method == http.MethodGet {
					if tt.get == nil {
						t.Error("unexpected GET")
						w.WriteHeader(http.StatusMethodNotAllowed)
						return
					}
					tt.get(w, r, body)
					return
				}
				if m, _ := jsonrpc.DecodeMessage(body); m != nil && m.Method == "tools/call" {
					tt.post(startSSE(w))
					return
				}
				mcp("")(w, r, body)
			})
			l := &logs{}
			tr, ch := dial(t, s, Options{Common: httpopt.Common{Logger: slog.New(l), Reconnect: tiny()}})
			err := sendErr(tr, request(5, "tools/call"))
			if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) || !strings.Contains(err.Error(), tt.say) {
				t.Fatalf("Send = %v, want ErrOutcomeUnknown saying %q", err, tt.say)
			}
			if errors.Is(err, jsonrpc.ErrSessionExpired) {
				t.Error("an unknown outcome must not match ErrSessionExpired")
			}
			if n := s.Count(http.MethodPost); n != 1 {
				t.Errorf("%d POSTs, want 1: the request must not be sent again", n)
			}
			if n := s.Count(http.MethodGet); n != tt.gets {
				t.Errorf("%d GETs, want %d", n, tt.gets)
			}
			if tt.gets > 0 && len(l.Messages(slog.LevelWarn)) != 1 {
				t.Errorf("warnings %q, want one when giving up", l.Messages(slog.LevelWarn))
			}
			for {
				select {
				case m := <-ch:
					if m.Method == "" && m.ID.Raw() == "5" {
						t.Fatalf("a response was delivered although Send failed")
					}
					continue
				case <-time.After(20 * time.Millisecond):
				}
				break
			}
		})
	}
}

// TestResumeServerRetry: the server's retry: is the wait before resuming,
// exactly (the policy's own delays are a millisecond).
func TestResumeServerRetry(t *testing.T) {
	const retry = 300 * time.Millisecond
	var mu sync.Mutex
	var broke, resumed time.Time
	rs := resumable{
		post: func(ev func(string)) {
			ev("id: e1\nretry: 300\ndata:\n\n")
			mu.Lock()
			broke = time.Now()
			mu.Unlock()
		},
		gets: []func(ev func(string)){func(ev func(string)) {
			mu.Lock()
			resumed = time.Now()
			mu.Unlock()
			ev("id: e2\n" + data(response("5", `{}`)))
		}},
	}
	s := newServer(t, rs.handler(t))
	tr, ch := dial(t, s, Options{Common: httpopt.Common{Reconnect: tiny()}})
	send(t, tr, request(5, "tools/call"))
	next(t, ch)
	mu.Lock()
	gap := resumed.Sub(broke)
	mu.Unlock()
	if gap < retry || gap > retry+200*time.Millisecond {
		t.Errorf("resumed %v after the break, want %v (+ a little)", gap, retry)
	}
}

// TestResumeSessionExpired: a 404 to the resuming GET while a session is
// held: the outcome is unknown (never ErrSessionExpired, which would say
// the request did not run), the session is forgotten and Recv reports it.
func TestResumeSessionExpired(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		m, _ := jsonrpc.DecodeMessage(body)
		switch {
		case r.Method == http.MethodGet && r.Header.Get("Last-Event-Id") != "":
			http.Error(w, "no such session", http.StatusNotFound)
		case m != nil && m.Method == "tools/call":
			startSSE(w)("id: e1\ndata:\n\n")
		default:
			mcp("s-x")(w, r, body)
		}
	})
	tr, ch, lost := dialLost(t, s, Options{Common: httpopt.Common{Reconnect: tiny()}})
	send(t, tr, initialize())
	next(t, ch)
	err := sendErr(tr, request(5, "tools/call"))
	if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) || errors.Is(err, jsonrpc.ErrSessionExpired) {
		t.Fatalf("Send = %v, want ErrOutcomeUnknown only", err)
	}
	select {
	case err := <-lost:
		if !errors.Is(err, jsonrpc.ErrSessionExpired) {
			t.Errorf("Recv = %v", err)
		}
	case <-time.After(wait):
		t.Fatal("Recv reported no lost session")
	}
	if tr.SessionID() != "" {
		t.Errorf("session kept: %q", tr.SessionID())
	}
}

// TestResumeInterrupted: Close, or the caller's context, ends a
// resumption's wait at once; the request may have run.
func TestResumeInterrupted(t *testing.T) {
	for _, byClose := range []bool{true, false} {
		t.Run(map[bool]string{true: "Close", false: "context"}[byClose], func(t *testing.T) {
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				if r.Method == http.MethodPost {
					startSSE(w)("id: e1\nretry: 3000\ndata:\n\n")
					return
				}
				t.Error("resumed although interrupted")
			})
			tr, _ := dial(t, s, Options{Common: httpopt.Common{Reconnect: tiny()}})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			time.AfterFunc(50*time.Millisecond, func() {
				if byClose {
					tr.Close()
				} else {
					cancel()
				}
			})
			start := time.Now()
			err := tr.Send(ctx, request(5, "tools/call"))
			want := error(context.Canceled)
			if byClose {
				want = jsonrpc.ErrClosed
			}
			if !errors.Is(err, want) || !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
				t.Errorf("Send = %v, want %v and ErrOutcomeUnknown (the server took the request)", err, want)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("Send took %v", d)
			}
		})
	}
}

// TestResumeAtOnceThenBackOff: a broken stream is resumed at once the
// first time — and the first time after progress — unless the server
// sent retry:; then the policy's backoff, from InitialDelay (an hour
// here: the test ends the transport once it is logged).
func TestResumeAtOnceThenBackOff(t *testing.T) {
	const resuming = "modern: resuming the event stream of a request"
	tests := []struct {
		name  string
		rs    resumable
		waits []time.Duration // logged, in order
	}{{
		name: "no progress: at once, then the backoff",
		rs: resumable{
			post: func(ev func(string)) { ev("id: e1\ndata:\n\n"); cut() },
			gets: []func(ev func(string)){func(func(string)) { cut() }},
		},
		waits: []time.Duration{0, time.Hour},
	}, {
		name: "progress: at once again",
		rs: resumable{
			post: func(ev func(string)) { ev("id: e1\ndata:\n\n"); cut() },
			gets: []func(ev func(string)){
				func(ev func(string)) { ev("id: e2\n" + data(progressNote)); cut() },
				func(func(string)) { cut() },
			},
		},
		waits: []time.Duration{0, 0, time.Hour},
	}, {
		name: "the server's retry: first",
		rs: resumable{
			post: func(ev func(string)) { ev("id: e1\nretry: 20\ndata:\n\n"); cut() },
			gets: []func(ev func(string)){
				func(func(string)) { cut() },
				func(ev func(string)) { ev("id: e2\n" + data(response("5", `{}`))) },
			},
		},
		waits: []time.Duration{20 * time.Millisecond, 20 * time.Millisecond},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.rs.handler(t))
			l := &logs{}
			p := tiny()
			p.InitialDelay, p.MaxDelay, p.Budget = time.Hour, time.Hour, 2*time.Hour
			tr, ch := dial(t, s, Options{Common: httpopt.Common{Logger: slog.New(l), Reconnect: p}})
			send(t, tr, initialize())
			next(t, ch)
			res := make(chan error, 1)
			go func() { res <- sendErr(tr, request(5, "tools/call")) }()
			testkit.Eventually(t, wait, "the resumptions logged", func() bool {
				return len(l.Durations(resuming, "wait")) >= len(tt.waits)
			})
			if got := l.Durations(resuming, "wait"); fmt.Sprint(got) != fmt.Sprint(tt.waits) {
				t.Errorf("waits %v, want %v", got, tt.waits)
			}
			if tt.waits[len(tt.waits)-1] == time.Hour {
				tr.Close()
			}
			select {
			case err := <-res:
				if last := tt.waits[len(tt.waits)-1]; last != time.Hour && err != nil {
					t.Errorf("Send = %v, want the response", err)
				}
			case <-time.After(wait):
				t.Fatal("Send did not end")
			}
		})
	}
}

// TestResumeEndedStreamsBackOff: a resumed stream that the server ends
// cleanly is resumed after a wait, never at once: the policy's backoff or
// the server's retry:, at least minServerRetry. And a new event id
// without a message (a priming event), and without a retry: that makes
// it a poll (see TestResumeServerPoll), is no progress: the policy's
// attempts run out. The transport resumed a stream that only primed some
// 23,000 times a second, for ever: each new id started the policy's run
// over, and its first wait was none; and one that brought a message in
// each stream as fast as the server could end them.
func TestResumeEndedStreamsBackOff(t *testing.T) {
	const resuming = "modern: resuming the event stream of a request"
	tests := []struct {
		name   string
		field  string // the server's retry: field, on every stream
		notes  int    // resuming GETs that bring a notification; the next brings the response
		waits  []time.Duration
		answer bool
	}{{
		name:  "priming only, no retry:",
		waits: []time.Duration{0, time.Millisecond, 2 * time.Millisecond}, // then the policy gives up
	}, {
		name:   "a notification in each, no retry:",
		notes:  4,
		waits:  []time.Duration{0, time.Millisecond, time.Millisecond, time.Millisecond, time.Millisecond},
		answer: true,
	}, {
		name:   "a notification in each, retry: 0",
		field:  "retry: 0\n",
		notes:  2,
		waits:  []time.Duration{minServerRetry, minServerRetry, minServerRetry}, // polls: retry: 0 is 100 ms
		answer: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var gets atomic.Int64
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				m, _ := jsonrpc.DecodeMessage(body)
				switch {
				case r.Method == http.MethodPost && m != nil && m.Method == "tools/call":
					startSSE(w)("id: 0\n" + tt.field + "data:\n\n") // primed, then a clean end
				case r.Method == http.MethodGet && r.Header.Get("Last-Event-Id") != "":
					n := gets.Add(1)
					ev := "id: " + strconv.FormatInt(n, 10) + "\n" + tt.field
					switch {
					case !tt.answer:
						ev += "data:\n\n"
					case n <= int64(tt.notes):
						ev += data(progressNote)
					default:
						ev += data(response("5", `{}`))
					}
					startSSE(w)(ev) // then a clean end
				default:
					mcp("s1")(w, r, body)
				}
			})
			l := &logs{}
			p := tiny() // 1 ms doubling, no jitter, 3 attempts
			tr, ch := dial(t, s, Options{Common: httpopt.Common{Logger: slog.New(l), Reconnect: p}})
			send(t, tr, initialize())
			next(t, ch)
			err := sendErr(tr, request(5, "tools/call"))
			wantGETs := int64(p.MaxAttempts)
			if tt.answer {
				wantGETs = int64(tt.notes + 1)
				if err != nil {
					t.Errorf("Send = %v, want the response", err)
				}
			} else if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) || !strings.Contains(err.Error(), "exhausted after 3 attempts") {
				t.Errorf("Send = %v, want the policy exhausted, outcome unknown", err)
			}
			if n := gets.Load(); n != wantGETs {
				t.Errorf("%d resuming GETs, want %d", n, wantGETs)
			}
			if got := l.Durations(resuming, "wait"); fmt.Sprint(got) != fmt.Sprint(tt.waits) {
				t.Errorf("waits %v, want %v", got, tt.waits)
			}
			var want []string
			for i := range wantGETs {
				want = append(want, strconv.FormatInt(i, 10))
			}
			if ids := lastEventIDs(s); strings.Join(ids, ",") != strings.Join(want, ",") {
				t.Errorf("resumed with Last-Event-ID %q, want the newest id each time", ids)
			}
		})
	}
}

// TestResumeServerPoll: a stream that the server ends cleanly after a new
// event id, having sent a retry: field (on it or before), is a poll the
// server asked for, as the specification lets it do with a long-running
// request: the next GET waits the retry: (minServerRetry at least) and
// costs none of the policy's attempts, for as long as the server goes on,
// until the response comes or the caller gives up. Each poll was a
// failed attempt: a tool that ran for more than MaxAttempts polls failed
// the call as outcome unknown while the server was still running it.
// Without a new id it is no poll: the policy's attempts run out.
func TestResumeServerPoll(t *testing.T) {
	const resuming = "modern: resuming the event stream of a request"
	repeat := func(d time.Duration, n int) []time.Duration {
		w := make([]time.Duration, n)
		for i := range w {
			w[i] = d
		}
		return w
	}
	const polls = 5 // resuming GETs before the response: more than tiny's 3 attempts
	tests := []struct {
		name   string
		post   string             // the answer stream's event, before its clean end
		get    func(n int) string // resuming GET n's event (n from 1), before its clean end
		answer bool               // GET polls+1 brings the response
		giveUp bool               // the caller gives up after polls+1 GETs
		waits  []time.Duration
		ids    string // the Last-Event-IDs sent
	}{{
		name:   "a new id and retry: on every stream",
		post:   "id: p0\nretry: 120\ndata:\n\n",
		get:    func(n int) string { return fmt.Sprintf("id: p%d\nretry: 120\ndata:\n\n", n) },
		answer: true,
		waits:  repeat(120*time.Millisecond, polls+1),
		ids:    "p0,p1,p2,p3,p4,p5",
	}, {
		name:   "retry: 5 on the answer stream only",
		post:   "id: p0\nretry: 5\ndata:\n\n",
		get:    func(n int) string { return fmt.Sprintf("id: p%d\ndata:\n\n", n) },
		answer: true,
		waits:  repeat(minServerRetry, polls+1),
		ids:    "p0,p1,p2,p3,p4,p5",
	}, {
		name:   "polled until the caller gives up",
		post:   "id: p0\nretry: 0\ndata:\n\n",
		get:    func(n int) string { return fmt.Sprintf("id: p%d\ndata:\n\n", n) },
		giveUp: true,
	}, {
		name:  "the same id again: no poll",
		post:  "id: p0\nretry: 0\ndata:\n\n",
		get:   func(int) string { return "id: p0\ndata:\n\n" },
		waits: repeat(minServerRetry, 4), // the poll, then 3 failed attempts
		ids:   "p0,p0,p0,p0",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var gets atomic.Int32
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				m, _ := jsonrpc.DecodeMessage(body)
				switch {
				case r.Method == http.MethodPost && m != nil && m.Method == "tools/call":
					startSSE(w)(tt.post)
				case r.Method == http.MethodGet && r.Header.Get("Last-Event-Id") != "":
					n := int(gets.Add(1))
					if tt.answer && n > polls {
						startSSE(w)(fmt.Sprintf("id: p%d\n", n) + data(response("5", `{"done":true}`)))
						return
					}
					startSSE(w)(tt.get(n))
				default:
					mcp("s1")(w, r, body)
				}
			})
			l := &logs{}
			tr, ch := dial(t, s, Options{Common: httpopt.Common{Logger: slog.New(l), Reconnect: tiny()}})
			send(t, tr, initialize())
			next(t, ch)
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			res := make(chan error, 1)
			go func() { res <- tr.Send(ctx, request(5, "tools/call")) }()
			if tt.giveUp {
				testkit.Eventually(t, wait, "the polls", func() bool { return gets.Load() >= polls+1 })
				cancel()
			}
			var err error
			select {
			case err = <-res:
			case <-time.After(wait):
				t.Fatal("Send did not end")
			}
			switch {
			case tt.answer:
				if err != nil {
					t.Fatalf("Send = %v, want the response", err)
				}
				if got := describe(next(t, ch)); got != `response 5 {"done":true}` {
					t.Errorf("got %s", got)
				}
			case tt.giveUp:
				if !errors.Is(err, context.Canceled) || !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
					t.Errorf("Send = %v, want context.Canceled and ErrOutcomeUnknown", err)
				}
			default:
				if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) || !strings.Contains(err.Error(), "3 attempts in a row without progress") {
					t.Errorf("Send = %v, want the policy exhausted, outcome unknown", err)
				}
			}
			if tt.giveUp {
				return // how many polls the cancel let through is not the point
			}
			if got := l.Durations(resuming, "wait"); fmt.Sprint(got) != fmt.Sprint(tt.waits) {
				t.Errorf("waits %v, want %v", got, tt.waits)
			}
			if ids := strings.Join(lastEventIDs(s), ","); ids != tt.ids {
				t.Errorf("resumed with Last-Event-ID %s, want %s", ids, tt.ids)
			}
			if w := l.Messages(slog.LevelWarn); tt.answer && len(w) != 0 {
				t.Errorf("warnings: %q", w)
			}
		})
	}
}

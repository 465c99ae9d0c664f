package modern

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/anymcp/anymcp/httpopt"
	"github.com/anymcp/anymcp/jsonrpc"
)

func TestNew(t *testing.T) {
	tests := []struct {
		endpoint string
		ok       bool
	}{
		{"http://127.0.0.1:8080/mcp", true},
		{"https://example.com/mcp?x=1", true},
		{"HTTP://example.com/", true},
		{"ftp://example.com/mcp", false},
		{"ws://example.com/mcp", false},
		{"http:///mcp", false},
		{"://nope", false},
		{"example.com/mcp", false},
	}
	for _, tt := range tests {
		tr, err := New(tt.endpoint, Options{})
		if (err == nil) != tt.ok {
			t.Errorf("New(%q) error = %v, want ok=%v", tt.endpoint, err, tt.ok)
		}
		if tr != nil {
			tr.Close()
		}
	}
	// The error of a refused endpoint shows nothing of its password or
	// query, even when it does not parse (url.Parse's error repeats it).
	for _, bad := range []string{"ftp://u:pa55w0rd@h/mcp?api_key=k3y", "http://u:pa55w0rd@h:port/mcp?api_key=k3y"} {
		if _, err := New(bad, Options{}); err == nil {
			t.Errorf("New(%q) succeeded", bad)
		} else if strings.Contains(err.Error(), "pa55w0rd") || strings.Contains(err.Error(), "k3y") {
			t.Errorf("New(%q): the error shows the URL's secrets: %v", bad, err)
		}
	}
}

// TestPOSTHeaders: every message is a POST of its JSON encoding with the
// Accept and Content-Type the specification asks for and the static headers.
func TestPOSTHeaders(t *testing.T) {
	s := newServer(t, mcp(""))
	tr, ch := dial(t, s, Options{Common: httpopt.Common{Header: http.Header{"X-Static": {"yes"}}}})
	send(t, tr, request(7, "tools/call"))
	next(t, ch)
	send(t, tr, notification("notifications/progress"))
	send(t, tr, &jsonrpc.Message{ID: jsonrpc.String("s1"), Result: []byte(`{}`)})

	want := []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress"}`,
		`{"jsonrpc":"2.0","id":"s1","result":{}}`,
	}
	reqs := s.Requests()
	if len(reqs) != len(want) {
		t.Fatalf("server saw %d requests, want %d", len(reqs), len(want))
	}
	for i, r := range reqs {
		if r.Method != http.MethodPost || r.Body != want[i] {
			t.Errorf("request %d: %s %s, want POST %s", i, r.Method, r.Body, want[i])
		}
		for k, v := range map[string]string{
			"Accept":       "application/json, text/event-stream",
			"Content-Type": "application/json",
			"X-Static":     "yes",
		} {
			if got := r.Header.Get(k); got != v {
				t.Errorf("request %d: %s = %q, want %q", i, k, got, v)
			}
		}
		if r.Header.Get("Mcp-Session-Id") != "" || r.Header.Get("Mcp-Protocol-Version") != "" {
			t.Errorf("request %d carries session headers before initialize", i)
		}
	}
}

// TestRequestAnswers: each way a server may answer a request delivers every
// message of the answer, in order, and Send returns nil.
func TestRequestAnswers(t *testing.T) {
	const (
		progress = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`
		sampling = `{"jsonrpc":"2.0","id":"srv-1","method":"sampling/createMessage","params":{}}`
		answer   = `{"jsonrpc":"2.0","id":5,"result":{"content":[]}}`
	)
	tests := []struct {
		name   string
		answer handler
		want   []string
	}{{
		name: "json",
		answer: func(w http.ResponseWriter, r *http.Request, _ []byte) {
			writeJSON(w, answer)
		},
		want: []string{`response 5 {"content":[]}`},
	}, {
		name: "json with charset",
		answer: func(w http.ResponseWriter, r *http.Request, _ []byte) {
			w.Header().Set("Content-Type", "Application/JSON; charset=utf-8")
			io.WriteString(w, answer)
		},
		want: []string{`response 5 {"content":[]}`},
	}, {
		name: "json batch",
		answer: func(w http.ResponseWriter, r *http.Request, _ []byte) {
			writeJSON(w, "["+progress+","+sampling+","+answer+"]")
		},
		want: []string{"notification notifications/progress", `request sampling/createMessage "srv-1"`, `response 5 {"content":[]}`},
	}, {
		name: "sse with a notification and a server request first",
		answer: func(w http.ResponseWriter, r *http.Request, _ []byte) {
			ev := startSSE(w)
			ev(data(progress))
			ev(data(sampling))
			ev("event: message\nid: 3\n" + data(answer))
		},
		want: []string{"notification notifications/progress", `request sampling/createMessage "srv-1"`, `response 5 {"content":[]}`},
	}, {
		name: "sse with priming, other event types, comments and junk",
		answer: func(w http.ResponseWriter, r *http.Request, _ []byte) {
			ev := startSSE(w)
			ev("id: prime-0\ndata:\n\n")
			ev(": keep-alive\n\n")
			ev("event: endpoint\ndata: /elsewhere\n\n")
			ev(data("this is not JSON"))
			ev(data(`{"jsonrpc":"1.0","id":5,"result":{}}`))
			ev(data(`[1,2]`))
			ev("retry: 1000\n" + data(answer))
		},
		want: []string{`response 5 {"content":[]}`},
	}, {
		name: "sse batch in one event",
		answer: func(w http.ResponseWriter, r *http.Request, _ []byte) {
			ev := startSSE(w)
			ev(data("[" + progress + "," + answer + "]"))
		},
		want: []string{"notification notifications/progress", `response 5 {"content":[]}`},
	}, {
		name: "sse that stays open after the response",
		answer: func(w http.ResponseWriter, r *http.Request, _ []byte) {
			ev := startSSE(w)
			ev(data(answer))
			ev(data(progress)) // after the response: not read
			<-r.Context().Done()
		},
		want: []string{`response 5 {"content":[]}`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.answer)
			tr, ch := dial(t, s, Options{})
			send(t, tr, request(5, "tools/call"))
			for i, want := range tt.want {
				if got := describe(next(t, ch)); got != want {
					t.Fatalf("message %d = %s, want %s", i, got, want)
				}
			}
			none(t, ch)
		})
	}
}

// TestRequestFailures: answers that hold no response make Send fail with an
// error that says why, and nothing half-read reaches Recv.
func TestRequestFailures(t *testing.T) {
	longHTML := "<html>" + strings.Repeat("é", 2000) + "</html>"
	tests := []struct {
		name   string
		answer handler
		is     []error
		check  func(t *testing.T, err error)
	}{{
		name:   "202",
		answer: func(w http.ResponseWriter, _ *http.Request, _ []byte) { w.WriteHeader(http.StatusAccepted) },
		is:     []error{ErrNoResponse, jsonrpc.ErrOutcomeUnknown},
	}, {
		name:   "200 with no body",
		answer: func(w http.ResponseWriter, _ *http.Request, _ []byte) { writeJSON(w, "") },
		is:     []error{ErrNoResponse},
	}, {
		name: "unknown content type",
		answer: func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<p>hello</p>")
		},
		is: []error{ErrContentType},
	}, {
		// An HTTP+SSE server's session stream, as go-mcp answers a POST
		// to its SSE URL: no response will come.
		name: "sse opening with an endpoint event",
		answer: func(w http.ResponseWriter, r *http.Request, _ []byte) {
			ev := startSSE(w)
			ev("event: endpoint\ndata: /message?sessionId=1\n\n")
			<-r.Context().Done()
		},
		is: []error{ErrEndpointEvent, jsonrpc.ErrOutcomeUnknown},
	}, {
		name: "sse ends before the response",
		answer: func(w http.ResponseWriter, r *http.Request, _ []byte) {
			if r.Method == http.MethodGet { // no resumption
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			ev := startSSE(w)
			ev("id: ev-9\nretry: 15\n" + data(`{"jsonrpc":"2.0","method":"notifications/progress"}`))
		},
		is: []error{jsonrpc.ErrOutcomeUnknown},
		check: func(t *testing.T, err error) {
			var se *streamError
			if !errors.As(err, &se) || se.lastEventID != "ev-9" || !se.hasRetry || se.retry != 15*time.Millisecond {
				t.Errorf("stream cursor not kept: %#v", se)
			}
		},
	}, {
		name: "sse connection cut before the response",
		answer: func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			ev := startSSE(w)
			ev("data: {\"jsonrpc\":") // half an event
			panic(http.ErrAbortHandler)
		},
		is: []error{jsonrpc.ErrOutcomeUnknown},
	}, {
		name:   "json that is not JSON-RPC",
		answer: func(w http.ResponseWriter, _ *http.Request, _ []byte) { writeJSON(w, `{"hello":"world"}`) },
		is:     []error{jsonrpc.ErrOutcomeUnknown},
	}, {
		name:   "json answer to another id",
		answer: func(w http.ResponseWriter, _ *http.Request, _ []byte) { writeJSON(w, response("99", "{}")) },
		is:     []error{jsonrpc.ErrOutcomeUnknown},
	}, {
		name: "json error without an id",
		answer: func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			writeJSON(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`)
		},
		check: func(t *testing.T, err error) {
			var rpc *jsonrpc.Error
			if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeParseError {
				t.Errorf("want the JSON-RPC error, got %v", err)
			}
		},
	}, {
		name: "500 with a JSON-RPC error",
		answer: func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, `{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"boom"}}`)
		},
		check: func(t *testing.T, err error) {
			var he *jsonrpc.HTTPError
			if !errors.As(err, &he) || he.StatusCode != 500 || he.Method != "POST" || !strings.HasSuffix(he.URL, "/mcp") {
				t.Fatalf("want *HTTPError 500, got %v", err)
			}
			if he.RPCError == nil || he.RPCError.Code != jsonrpc.CodeInternalError || he.RPCError.Message != "boom" {
				t.Errorf("RPCError = %v", he.RPCError)
			}
			if errors.Is(err, jsonrpc.ErrSessionExpired) {
				t.Error("a 500 is not a session expiry")
			}
		},
	}, {
		name: "503 with a long HTML body",
		answer: func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, longHTML)
		},
		check: func(t *testing.T, err error) {
			var he *jsonrpc.HTTPError
			if !errors.As(err, &he) || he.StatusCode != 503 || he.RPCError != nil {
				t.Fatalf("want *HTTPError 503, got %v", err)
			}
			if len(he.Body) > 512 || len(he.Body) < 500 || !utf8.ValidString(he.Body) || !strings.HasPrefix(he.Body, "<html>é") {
				t.Errorf("Body excerpt: %d bytes, valid UTF-8 %v", len(he.Body), utf8.ValidString(he.Body))
			}
		},
	}, {
		name: "404 without a session",
		answer: func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			http.NotFound(w, nil)
		},
		check: func(t *testing.T, err error) {
			var he *jsonrpc.HTTPError
			if !errors.As(err, &he) || he.StatusCode != 404 || errors.Is(err, jsonrpc.ErrSessionExpired) {
				t.Errorf("want a plain *HTTPError 404, got %v", err)
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.answer)
			l := &logs{}
			tr, ch := dial(t, s, Options{Common: httpopt.Common{Logger: slog.New(l), Reconnect: tiny()}})
			err := sendErr(tr, request(5, "tools/call"))
			if err == nil {
				t.Fatal("Send succeeded")
			}
			for _, target := range tt.is {
				if !errors.Is(err, target) {
					t.Errorf("error %q is not %v", err, target)
				}
			}
			if tt.check != nil {
				tt.check(t, err)
			}
			// Whatever the server sent besides may be delivered, but
			// never a response to this request.
			for {
				select {
				case m := <-ch:
					if m.Method == "" && m.ID.Raw() == "5" {
						t.Fatalf("a response was delivered although Send failed: %s", describe(m))
					}
					continue
				case <-time.After(20 * time.Millisecond):
				}
				break
			}
		})
	}
}

// TestNotificationAnswers: notifications and responses are done at any
// 2xx; a JSON body with messages is delivered, anything else dropped.
func TestNotificationAnswers(t *testing.T) {
	tests := []struct {
		name   string
		answer handler
		want   []string
		status int // of an HTTPError, 0 for success
	}{
		{"202", func(w http.ResponseWriter, _ *http.Request, _ []byte) { w.WriteHeader(202) }, nil, 0},
		{"200 empty", func(w http.ResponseWriter, _ *http.Request, _ []byte) {}, nil, 0},
		{"204", func(w http.ResponseWriter, _ *http.Request, _ []byte) { w.WriteHeader(204) }, nil, 0},
		{"200 with a message", func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			writeJSON(w, `{"jsonrpc":"2.0","method":"notifications/message","params":{}}`)
		}, []string{"notification notifications/message"}, 0},
		{"200 with a batch", func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			writeJSON(w, `[{"jsonrpc":"2.0","method":"a"},{"jsonrpc":"2.0","id":1,"method":"b"}]`)
		}, []string{"notification a", "request b 1"}, 0},
		{"200 with non-JSON-RPC JSON", func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			writeJSON(w, `{"status":"accepted"}`)
		}, nil, 0},
		{"200 with text", func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			io.WriteString(w, "Accepted")
		}, nil, 0},
		{"200 with an event stream", func(w http.ResponseWriter, r *http.Request, _ []byte) {
			ev := startSSE(w)
			ev(data(`{"jsonrpc":"2.0","method":"x"}`))
			<-r.Context().Done()
		}, nil, 0},
		{"400", func(w http.ResponseWriter, _ *http.Request, _ []byte) {
			http.Error(w, "bad", http.StatusBadRequest)
		}, nil, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.answer)
			tr, ch := dial(t, s, Options{})
			for _, m := range []*jsonrpc.Message{
				notification("notifications/cancelled"),
				{ID: jsonrpc.Int(4), Result: []byte(`{}`)},
			} {
				err := sendErr(tr, m)
				var he *jsonrpc.HTTPError
				switch {
				case tt.status == 0 && err != nil:
					t.Fatalf("Send %s: %v", describe(m), err)
				case tt.status != 0 && (!errors.As(err, &he) || he.StatusCode != tt.status):
					t.Fatalf("Send %s: %v, want HTTP %d", describe(m), err, tt.status)
				}
				for i, want := range tt.want {
					if got := describe(next(t, ch)); got != want {
						t.Fatalf("message %d = %s, want %s", i, got, want)
					}
				}
				none(t, ch)
			}
		})
	}
}

// TestContextCancel: the caller's context ends the POST at once, whether
// the server has not answered yet or is in the middle of a stream.
func TestContextCancel(t *testing.T) {
	tests := []struct {
		name   string
		answer handler
	}{
		{"before the answer", func(w http.ResponseWriter, r *http.Request, _ []byte) {
			<-r.Context().Done()
		}},
		{"mid-stream", func(w http.ResponseWriter, r *http.Request, _ []byte) {
			ev := startSSE(w)
			ev(data(`{"jsonrpc":"2.0","method":"notifications/progress"}`))
			<-r.Context().Done()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t, tt.answer)
			tr, _ := dial(t, s, Options{})
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(50*time.Millisecond, cancel)
			start := time.Now()
			err := tr.Send(ctx, request(5, "tools/call"))
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Send = %v, want context.Canceled", err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("Send took %v after cancel", d)
			}
		})
	}
}

// TestInvalidEvents: junk on a stream is logged as a warning and dropped,
// an event over the size limit ends the stream, and neither panics.
func TestInvalidEvents(t *testing.T) {
	s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		ev := startSSE(w)
		ev(data("\xff\xfe not utf-8 {"))
		ev(data(`{"jsonrpc":"2.0","id":5}`))
		ev(data(`"just a string"`))
		ev(data(`{"jsonrpc":"2.0","method":"ok"}`))
		ev(data(`{"jsonrpc":"2.0","method":"big","params":"` + strings.Repeat("x", 4096) + `"}`))
	})
	l := &logs{}
	tr, ch := dial(t, s, Options{Common: httpopt.Common{Logger: slog.New(l), MaxEventSize: 1024}})
	err := sendErr(tr, request(5, "tools/call"))
	if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Fatalf("Send = %v, want ErrOutcomeUnknown", err)
	}
	if got := describe(next(t, ch)); got != "notification ok" {
		t.Fatalf("got %s", got)
	}
	none(t, ch)
	if warns := l.Messages(slog.LevelWarn); len(warns) != 3 {
		t.Errorf("%d warnings, want 3 (one per invalid event): %q", len(warns), warns)
	}
}

// TestStrayResponseEndsCall: an answer stream that the server ends cleanly
// after a response to another id fails the request at once with
// ErrNoResponse (outcome unknown), instead of resuming the stream until
// the policy or the caller's deadline gives up: with and without event ids,
// and on a resumed stream.
func TestStrayResponseEndsCall(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer string // the POST's answer stream; it ends after this
		resume string // the resumed stream, if the answer is cut
	}{
		{"no ids", data(response("999", `{}`)), ""},
		{"with ids", "id: e1\n" + data(response("999", `{}`)), ""},
		{"on the resumed stream", "id: e1\ndata: \n\n", "id: e2\n" + data(response("999", `{}`))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := mcp("s1")
			s := newServer(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				switch {
				case strings.Contains(string(body), `"tools/call"`):
					ev := startSSE(w)
					ev(tc.answer)
					if tc.resume != "" {
						panic(http.ErrAbortHandler) // cut the stream: resumed with Last-Event-ID
					}
				case r.Method == http.MethodGet && r.Header.Get("Last-Event-Id") != "":
					ev := startSSE(w)
					ev(tc.resume) // empty for the first two cases: nothing to replay
				default:
					inner(w, r, body)
				}
			})
			// The default policy: without the rule, resuming would go on
			// well past the test's deadline.
			tr, ch := dial(t, s, Options{})
			handshake(t, tr, ch)
			err := sendErr(tr, request(2, "tools/call"))
			if !errors.Is(err, ErrNoResponse) || !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
				t.Fatalf("err = %v, want ErrNoResponse and ErrOutcomeUnknown", err)
			}
			if !strings.Contains(err.Error(), "999") {
				t.Errorf("the error does not name the stray id: %v", err)
			}
			if m := next(t, ch); describe(m) != "response 999 {}" {
				t.Errorf("queued %s, want the stray response for the protocol layer to drop", describe(m))
			}
		})
	}
}

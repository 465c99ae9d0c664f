package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
)

// tracer writes --trace: one JSON object a line for every JSON-RPC message
// sent or received and every HTTP exchange, with its direction and time.
// Credentials are redacted: sensitive headers, bearer and basic tokens
// anywhere in the text, and every secret this run was given.
//
//	{"time":"…","kind":"jsonrpc","dir":"send","message":{…}}
//	{"time":"…","kind":"http","dir":"request","method":"POST","url":"…","headers":{…}}
//	{"time":"…","kind":"http","dir":"response","method":"POST","url":"…","status":200,"headers":{…},"ms":1.2}
type tracer struct {
	mu     sync.Mutex
	w      io.Writer
	closer io.Closer // the trace file, nil for stderr
	sec    *secrets
	err    error // the first write error; tracing stops there
}

// traceEvent is one line of the trace.
type traceEvent struct {
	Time    string            `json:"time"`
	Kind    string            `json:"kind"` // jsonrpc or http
	Dir     string            `json:"dir"`  // send/recv, request/response
	Message json.RawMessage   `json:"message,omitempty"`
	Method  string            `json:"method,omitempty"`
	URL     string            `json:"url,omitempty"`
	Status  int               `json:"status,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Ms      *float64          `json:"ms,omitempty"`
	Error   string            `json:"error,omitempty"`
}

// openTrace opens the --trace destination: a file (created 0600,
// truncated) or "-" for stderr.
func openTrace(dest string, stderr io.Writer, sec *secrets) (*tracer, error) {
	if dest == "-" {
		return &tracer{w: stderr, sec: sec}, nil
	}
	f, err := os.OpenFile(dest, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, usageErr("--trace: %v", err)
	}
	return &tracer{w: f, closer: f, sec: sec}, nil
}

// write encodes one event, scrubs it and writes it as a line.
func (t *tracer) write(ev traceEvent) {
	ev.Time = time.Now().UTC().Format(time.RFC3339Nano)
	b, err := json.Marshal(ev)
	if err != nil {
		return
	}
	line := t.sec.scrub(string(b)) + "\n"
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil {
		_, t.err = io.WriteString(t.w, line)
	}
}

// message is the client's message hook.
func (t *tracer) message(sent bool, m *jsonrpc.Message) {
	raw, err := jsonrpc.Encode(m)
	if err != nil {
		return
	}
	dir := "recv"
	if sent {
		dir = "send"
	}
	t.write(traceEvent{Kind: "jsonrpc", Dir: dir, Message: raw})
}

// Close closes the trace file.
func (t *tracer) Close() error {
	if t == nil || t.closer == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closer.Close()
}

// roundTripper sees every HTTP exchange. With a tracer it traces the
// request when it leaves and the response when its headers arrive (the
// body, an SSE stream maybe, is the JSON-RPC messages, traced on their
// own).
type roundTripper struct {
	base http.RoundTripper
	t    *tracer // nil: no trace
	// tokens, when set, notes the answers to requests that carried a
	// kept OAuth token (the Authorizer's Transport sits above).
	tokens *tokenAnswers
	// stream, when set, follows the event streams GETs open.
	stream *standaloneStream
}

// tokenAnswers is the status of the last answer to a request that carried
// a kept OAuth token.
type tokenAnswers struct{ last atomic.Int32 }

// failed reports whether that answer was a server error (5xx).
func (ta *tokenAnswers) failed() bool { return ta != nil && ta.last.Load() >= 500 }

func (rt *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	url := redactURL(req.URL.String())
	if rt.t != nil {
		rt.t.write(traceEvent{Kind: "http", Dir: "request", Method: req.Method, URL: url, Headers: redactHeaders(req.Header)})
	}
	start := time.Now()
	resp, err := rt.base.RoundTrip(req)
	if rt.stream != nil && err == nil && isEventStream(req, resp) {
		resp.Body = rt.stream.watch(resp.Body)
	}
	if rt.tokens != nil && err == nil && req.Header.Get("Authorization") != "" {
		rt.tokens.last.Store(int32(resp.StatusCode))
	}
	if rt.t != nil {
		ms := float64(time.Since(start).Microseconds()) / 1000
		ev := traceEvent{Kind: "http", Dir: "response", Method: req.Method, URL: url, Ms: &ms}
		if err != nil {
			ev.Error = err.Error()
		} else {
			ev.Status = resp.StatusCode
			ev.Headers = redactHeaders(resp.Header)
		}
		rt.t.write(ev)
	}
	return resp, err
}

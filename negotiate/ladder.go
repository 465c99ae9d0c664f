package negotiate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/reconnect"
)

// Config is what the ladder needs besides the URL. The zero value works.
type Config struct {
	HTTPClient   *http.Client // used for every request, of every rung
	Header       http.Header  // static headers, e.g. Authorization
	Logger       *slog.Logger // nil discards
	Policy       Policy
	Cache        *Cache // nil: no cache
	MaxEventSize int    // SSE event limit for both transports; 0 = default
	// Reconnect is the transports' retry policy once connected (resuming
	// streams, reconnecting, waiting out 429/503); nil = the default. During
	// the negotiation itself a refused connection is reported at once.
	Reconnect *reconnect.Policy
}

// Result is a negotiated connection: a live transport on which initialize
// has been answered.
type Result struct {
	// Transport is live and owned by the caller, who must Close it. Any
	// message the server sent before the initialize response is still
	// waiting in its Recv.
	Transport jsonrpc.Transport
	// Name is StreamableHTTP or SSE.
	Name string
	// Response is the server's response to initialize: a result, or a
	// JSON-RPC error other than the newer-server ones.
	Response *jsonrpc.Message
	// Report says what was tried.
	Report *Report
	// DroppedNotifications counts the notifications the server sent before
	// answering initialize that were dropped, past the bounds of what is
	// kept for Recv (256 messages, 4 MiB).
	DroppedNotifications int
}

// Connect runs the ladder for url: it sends initialize (a request message
// built by the caller) over the transports the policy allows, in order, and
// returns the first that answers it. ctx bounds the whole negotiation. On
// failure the error is a *Error naming every attempt, or a
// *NewerServerError.
func Connect(ctx context.Context, url string, initialize *jsonrpc.Message, cfg Config) (*Result, error) {
	if !initialize.IsRequest() || initialize.Method != "initialize" {
		return nil, errors.New("negotiate: Connect needs an initialize request")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	l := &ladder{url: url, init: initialize, cfg: cfg, report: &Report{URL: url, Policy: cfg.Policy.String()}}
	return l.run(ctx)
}

type ladder struct {
	url     string
	init    *jsonrpc.Message
	cfg     Config
	report  *Report
	errs    []error
	dropped int // notifications dropped before the initialize answer, by the last await
}

// rung is one transport to try.
type rung func(ctx context.Context) (*Result, outcome)

// outcome classifies a failed rung.
type outcome int

const (
	succeeded outcome = iota
	movedOn           // a fallback-class refusal: the next rung may work
	stopped           // a real error: report it, try nothing else
)

func (l *ladder) run(ctx context.Context) (*Result, error) {
	var order []rung
	switch l.cfg.Policy {
	case StreamableOnly:
		order = []rung{l.tryStreamable}
	case SSEOnly:
		order = []rung{l.trySSE}
	case SSEFirst:
		order = []rung{l.trySSE, l.tryStreamable}
	default:
		order = []rung{l.tryStreamable, l.trySSE}
		if t, ok := l.cfg.Cache.Lookup(l.url); ok && t == SSE {
			// Known legacy: skip the POST probe. Should the server have
			// changed (its GET refused), the probe runs after all.
			l.report.FromCache = true
			order = []rung{l.trySSE, l.forgetCache, l.tryStreamable}
		}
	}
	for _, try := range order {
		res, out := try(ctx)
		switch out {
		case succeeded:
			if res != nil {
				l.report.Chosen = res.Name
				if l.cfg.Policy == Auto { // a forced choice says nothing of what Auto would find
					l.cfg.Cache.Store(l.url, res.Name)
				}
				res.Report = l.report
				return res, nil
			}
		case stopped:
			return nil, l.failure()
		}
	}
	return nil, l.failure()
}

// forgetCache is the rung between a stale cached outcome and a fresh ladder.
func (l *ladder) forgetCache(context.Context) (*Result, outcome) {
	l.cfg.Cache.Forget(l.url)
	return nil, succeeded
}

func (l *ladder) failure() error {
	var newer *NewerServerError
	for _, err := range l.errs {
		if errors.As(err, &newer) {
			return newer
		}
	}
	return &Error{Report: l.report, Errs: l.errs}
}

// attemptError is one rung's failure as the ladder's error text shows it.
type attemptError struct {
	method, url string
	status      int
	detail      string
	err         error
}

func (e *attemptError) Error() string {
	s := e.method + " " + e.url + " → "
	if e.status != 0 {
		s += fmt.Sprint(e.status)
		if e.detail != "" {
			s += ", " + e.detail
		}
		return s
	}
	return s + "no answer: " + e.err.Error()
}

func (e *attemptError) Unwrap() error { return e.err }

// record adds an attempt to the report, and its error to the list.
func (l *ladder) record(a Attempt, err error, detail string) {
	if err != nil {
		a.Error = err.Error()
		l.errs = append(l.errs, &attemptError{method: a.Method, url: a.URL, status: a.Status, detail: detail, err: err})
	}
	l.report.Attempts = append(l.report.Attempts, a)
	l.cfg.Logger.Debug("negotiate: attempt", "transport", a.Transport, "method", a.Method, "url", a.URL,
		"status", a.Status, "duration", a.Duration, "err", a.Error, "decision", a.Decision)
}

// exchange sends the initialize request over t and reads t until its
// response arrives, keeping the other messages for the caller, within
// bounds (see early); l.dropped counts the notifications dropped. The
// reading starts before the sending: a transport whose Send returns only
// once the response is queued (Streamable HTTP) would otherwise wait, with
// a full queue, for a reader that comes after it. On failure t is closed
// (so is it when ctx ends).
func (l *ladder) exchange(ctx context.Context, t jsonrpc.Transport) (*jsonrpc.Message, []*jsonrpc.Message, error) {
	type answer struct {
		resp   *jsonrpc.Message
		before *early
		err    error
	}
	ch := make(chan answer, 1)
	go func() {
		before := &early{log: l.cfg.Logger}
		for {
			m, err := t.Recv()
			if err != nil {
				ch <- answer{err: err}
				return
			}
			if m.IsResponse() && m.ID == l.init.ID {
				ch <- answer{resp: m, before: before}
				return
			}
			if err := before.add(m); err != nil {
				ch <- answer{err: err}
				return
			}
		}
	}()
	if err := t.Send(reconnect.FirstContact(ctx), l.init); err != nil {
		t.Close()
		<-ch
		return nil, nil, err
	}
	select {
	case a := <-ch:
		if a.err != nil {
			t.Close()
			return nil, nil, a.err
		}
		l.dropped = a.before.dropped
		return a.resp, a.before.msgs, nil
	case <-ctx.Done():
		t.Close()
		<-ch
		return nil, nil, ctx.Err()
	}
}

// accept turns an initialize answer into a result, unless the answer is a
// newer server's refusal.
func (l *ladder) accept(t jsonrpc.Transport, name string, resp *jsonrpc.Message, before []*jsonrpc.Message) (*Result, error) {
	if supported, ok := newerServer(resp.Error); ok {
		return nil, &NewerServerError{URL: l.url, RPCError: resp.Error, Supported: supported}
	}
	if len(before) > 0 {
		t = &replay{Transport: t, msgs: before}
	}
	return &Result{Transport: t, Name: name, Response: resp, DroppedNotifications: l.dropped}, nil
}

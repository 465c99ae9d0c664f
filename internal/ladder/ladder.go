package ladder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/anymcp/anymcp/httpopt"
	"github.com/anymcp/anymcp/internal/jsondec"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
)

// Config is what the ladder needs besides the target. The zero value works.
type Config struct {
	// Common is passed on to the transport of every rung: HTTPClient is
	// used for every request; Reconnect is the retry policy once connected
	// (during the negotiation itself a refused connection is reported at
	// once). Logger gets the ladder's own attempts too.
	httpopt.Common
	Policy negotiate.TransportPolicy // which HTTP transports, in what order
	Era    negotiate.EraPolicy       // which protocol eras
	Cache  *negotiate.Cache          // nil: no cache
	// StreamOnDemand leaves Streamable HTTP's standalone GET stream closed
	// until the protocol layer asks for it (see modern.Options).
	StreamOnDemand bool
	// Version pins one revision: only its era is tried, and only it is
	// offered. "" lets the ladder choose.
	Version string
	// ProbeTimeout bounds the wait for the answer to the stateless probe over
	// a transport without HTTP statuses (Handshake); 0 means
	// DefaultProbeTimeout.
	ProbeTimeout time.Duration
	// CacheKey is the key Handshake caches its outcome under; "" caches
	// nothing. Connect uses the URL, Dial a command's CommandKey.
	CacheKey string
	// Label names the server in Handshake's report; "" means CacheKey.
	Label string
	// Restart, when set, stops the server behind the transport Handshake
	// was given (closing it, as the caller would) and starts it again,
	// returning the new transport, which the caller then owns instead.
	// Handshake uses it for a server that refused initialize after it
	// refused the stateless probe (a stdio face over another server, such as
	// supergateway, takes the probe for the start of its session): the
	// new one gets initialize alone. Dial restarts a command itself;
	// Connect does not restart.
	Restart func(ctx context.Context) (jsonrpc.Transport, error)
	// Hook, when set, sees every message the ladder sends (out true) and
	// every answer it reads, for tracing.
	Hook func(out bool, m *jsonrpc.Message)
	// Observe, when set, is told of each request the ladder sends, before
	// it goes out: it may replace the request's Params (m is the ladder's
	// own copy), and returns the context to send it under and a function
	// told, once, how the request ended: its answer, or why there is none.
	// transport names the transport it goes over (StreamableHTTP, SSE,
	// Stdio, or the name Handshake was given).
	Observe func(ctx context.Context, transport string, m *jsonrpc.Message) (context.Context, func(resp *jsonrpc.Message, err error))
}

// Result is a negotiated connection: a live transport on which the
// opening request of one era has been answered.
type Result struct {
	// Transport is live and owned by the caller, who must Close it. Any
	// message the server sent before the answer is still waiting in its
	// Recv.
	Transport jsonrpc.Transport
	// Name is StreamableHTTP or SSE for a URL, Stdio for a command, or
	// the name Handshake was given.
	Name string
	// Era is the era the server speaks to this client.
	Era mcp.Era
	// Version is the stateless revision the probe was answered in; empty for
	// the initialize era, whose initialize result names it.
	Version string
	// Response is the server's answer: to server/discover (a result, or
	// for a stateless server without it a -32601 error), or to initialize (a
	// result, or a JSON-RPC error other than the newer-server ones).
	Response *jsonrpc.Message
	// NextID is the first request id the ladder did not use.
	NextID int64
	// Report says what was tried.
	Report *negotiate.Report
	// DroppedNotifications counts the notifications the server sent before
	// answering initialize that were dropped, past the bounds of what is
	// kept for Recv (256 messages, 4 MiB).
	DroppedNotifications int
}

// Connect runs the ladder for url: the stateless request first (a POST of
// server/discover with the revision in _meta and headers), then the initialize-era
// initialize over Streamable HTTP, then HTTP+SSE, as the policies allow and
// the answers direct, and returns the first that is answered. ctx bounds
// the whole negotiation. On failure the error is a *Error naming every
// attempt, or a *NewerServerError. Dial is the one entry for both kinds of
// target; Connect is its URL half.
func Connect(ctx context.Context, url string, hello Hello, cfg Config) (*Result, error) {
	l, err := newLadder(url, hello, cfg)
	if err != nil {
		return nil, err
	}
	return l.run(ctx)
}

type ladder struct {
	url    string // as the host gave it: the requests go there
	shown  string // url for reports, errors and logs: no password, no query values
	hello  Hello
	cfg    Config
	report *negotiate.Report
	errs   []error
	nextID int64
	tried  map[rung]bool
	queue  []rung
	cached bool // the first rung is the cache's outcome (order)
}

// cachedEndpointWait bounds how long a cached HTTP+SSE outcome waits for
// the stream's endpoint event before the cache is taken for stale (a
// server that moved to Streamable HTTP may hold a GET open without a
// word): half the time left, at most this. (A var: tests shorten it.)
var cachedEndpointWait = 5 * time.Second

// rung is one step of the ladder.
type rung int

const (
	rungStateless  rung = iota // POST server/discover (modern)
	rungStreamable             // POST initialize (legacy Streamable HTTP)
	rungSSE                    // GET the HTTP+SSE stream, then initialize
	rungForget                 // between a stale cached outcome and the rest
)

// outcome classifies how a rung went.
type outcome int

const (
	succeeded      outcome = iota
	movedOn                // a fallback-class refusal: the next rung may work
	stopped                // a real error: report it, try nothing else
	statelessFirst         // the answer came from a stateless server: try the stateless rung next
)

func newLadder(url string, hello Hello, cfg Config) (*ladder, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if hello.Initialize != nil && (!hello.Initialize.IsRequest() || hello.Initialize.Method != "initialize") {
		return nil, errors.New("the opening request given for the initialize era is not an initialize request")
	}
	if cfg.Version != "" {
		switch mcp.EraOf(cfg.Version) {
		case mcp.EraStateless:
			cfg.Era = negotiate.StatelessOnly
		case mcp.EraInitialize:
			cfg.Era = negotiate.InitializeOnly
		default:
			return nil, fmt.Errorf("unknown protocol revision %q (this client speaks %v and %v)", cfg.Version, mcp.StatelessVersions, mcp.InitializeVersions)
		}
	}
	switch cfg.Era {
	case negotiate.StatelessOnly:
		hello.Initialize = nil
	case negotiate.InitializeOnly:
		hello.Discover = nil
	}
	if hello.Initialize == nil && hello.Discover == nil {
		return nil, errors.New("nothing to send: no opening request of an era the policy allows")
	}
	if hello.Initialize == nil && cfg.Policy == negotiate.SSEOnly {
		return nil, errors.New("HTTP+SSE carries only the initialize era, and only the stateless one is allowed")
	}
	shown := shownURL(url)
	return &ladder{url: url, shown: shown, hello: hello, cfg: cfg, nextID: 1, tried: map[rung]bool{},
		report: &negotiate.Report{URL: shown, TransportPolicy: cfg.Policy.String(), EraPolicy: cfg.Era.String()}}, nil
}

// allows reports whether the policies let the ladder use r at all.
func (l *ladder) allows(r rung) bool {
	switch r {
	case rungStateless:
		return l.hello.Discover != nil && l.cfg.Policy != negotiate.SSEOnly
	case rungStreamable:
		return l.hello.Initialize != nil && l.cfg.Policy != negotiate.SSEOnly
	case rungSSE:
		return l.hello.Initialize != nil && l.cfg.Policy != negotiate.StreamableOnly
	}
	return true
}

// order is the ladder's plan: the policy's order, or a cached outcome
// first and then the rest.
func (l *ladder) order() []rung {
	var base []rung
	switch l.cfg.Policy {
	case negotiate.SSEOnly:
		base = []rung{rungSSE}
	case negotiate.SSEFirst:
		base = []rung{rungSSE, rungStateless, rungStreamable}
	default:
		base = []rung{rungStateless, rungStreamable, rungSSE}
	}
	if tr, era, ok := l.cfg.Cache.Lookup(l.url); ok && l.cfg.Policy == negotiate.TransportAuto {
		first := rungStreamable
		switch {
		case era == mcp.EraStateless:
			first = rungStateless
		case tr == negotiate.SSE:
			first = rungSSE
		}
		l.report.FromCache = true
		l.cached = true
		// Should the server have changed, the rest runs after all.
		base = append([]rung{first, rungForget}, slices.DeleteFunc(base, func(r rung) bool { return r == first })...)
	}
	return slices.DeleteFunc(base, func(r rung) bool { return !l.allows(r) })
}

func (l *ladder) run(ctx context.Context) (*Result, error) {
	l.queue = l.order()
	for len(l.queue) > 0 {
		r := l.queue[0]
		l.queue = l.queue[1:]
		if l.tried[r] {
			continue
		}
		l.tried[r] = true
		var res *Result
		var out outcome
		switch r {
		case rungStateless:
			res, out = l.tryStateless(ctx)
		case rungStreamable:
			res, out = l.tryStreamable(ctx)
		case rungSSE:
			res, out = l.trySSE(ctx, l.cached && len(l.tried) == 1)
		case rungForget:
			l.cfg.Cache.Forget(l.url)
			continue
		}
		switch out {
		case succeeded:
			return l.succeed(res), nil
		case stopped:
			return nil, l.failure()
		case statelessFirst:
			if l.tried[rungStateless] || !l.allows(rungStateless) {
				return nil, l.failure()
			}
			l.queue = append([]rung{rungStateless}, l.queue...)
		}
	}
	return nil, l.failure()
}

// succeed finishes the report and caches the outcome.
func (l *ladder) succeed(res *Result) *Result {
	l.report.Chosen, l.report.Era = res.Name, res.Era
	if l.cfg.Policy == negotiate.TransportAuto && l.cfg.Era == negotiate.EraAuto { // a forced choice says nothing of what TransportAuto would find
		l.cfg.Cache.Store(l.url, res.Name, res.Era)
	}
	res.Report, res.NextID = l.report, l.nextID
	return res
}

func (l *ladder) failure() error {
	var newer *negotiate.NewerServerError
	for _, err := range l.errs {
		if errors.As(err, &newer) {
			return newer
		}
	}
	return &negotiate.Error{Report: l.report, Errs: l.errs}
}

// attemptError is one rung's failure as the ladder's error text shows it.
type attemptError struct {
	method, url        string
	request, transport string
	status             int
	detail             string
	err                error
}

func (e *attemptError) Error() string {
	if e.method == "" { // a transport without HTTP: name the request
		s := e.request + " over " + e.transport + ": " + e.err.Error()
		if e.detail != "" {
			s += " (" + e.detail + ")"
		}
		return s
	}
	var re *jsonrpc.RedirectError
	if errors.As(e.err, &re) {
		return re.Error() // "GET url → 307 to other: refused: why"
	}
	s := e.method + " " + e.url
	if e.status == 0 {
		return s + " → no answer: " + e.cause()
	}
	var he *jsonrpc.HTTPError
	if errors.As(e.err, &he) && he.StatusCode == e.status {
		// The status is the cause. Two POSTs to one URL (the stateless
		// request, then initialize) are told apart by their request.
		if e.method == http.MethodPost && e.request != "" {
			s += " (" + e.request + ")"
		}
		s += " → " + strconv.Itoa(e.status)
		if e.detail != "" {
			s += ", " + e.detail
		}
		if !isFallbackStatus(e.status) { // it stopped the ladder: what the server said
			switch {
			case he.RPCError != nil:
				s += " (" + he.RPCError.Error() + ")"
			case he.Body != "":
				s += ": " + he.Body
			}
		}
		return s
	}
	// An answer whose status does not say what went wrong (a 200 with
	// a body that does not decode, an endpoint on another origin): the
	// cause does.
	s += " → " + strconv.Itoa(e.status)
	if e.detail != "" {
		s += ", " + e.detail
	}
	return s + ": " + e.cause()
}

// cause is the attempt's error without the prefix that names the exchange
// the attempt already names ("HTTP+SSE: GET url: ").
func (e *attemptError) cause() string {
	msg := e.err.Error()
	for _, pkg := range []string{"HTTP+SSE: ", "Streamable HTTP: "} {
		if rest, ok := strings.CutPrefix(msg, pkg+e.method+" "+e.url+": "); ok {
			return rest
		}
	}
	return msg
}

func (e *attemptError) Unwrap() error { return e.err }

// record adds an attempt to the report, and its error to the list.
func (l *ladder) record(a negotiate.Attempt, err error, detail string) {
	if err != nil {
		a.Error = err.Error()
		l.errs = append(l.errs, &attemptError{method: a.Method, url: a.URL, request: a.Request, transport: a.Transport, status: a.Status, detail: detail, err: err})
	}
	l.report.Attempts = append(l.report.Attempts, a)
	l.cfg.Logger.Debug("negotiate: attempt", "era", a.Era, "transport", a.Transport, "request", a.Request, "method", a.Method,
		"url", a.URL, "status", a.Status, "duration", a.Duration, "err", a.Error, "decision", a.Decision)
}

// request returns a copy of m with the ladder's next id.
func (l *ladder) request(m *jsonrpc.Message) *jsonrpc.Message {
	c := *m
	c.ID = jsonrpc.Int(l.nextID)
	l.nextID++
	return &c
}

// exchange sends m over t, the transport named name, and waits, through p
// (reading since before the send), for its answer, telling the hook and
// the observer about both.
func (l *ladder) exchange(ctx context.Context, name string, t jsonrpc.Transport, p *pump, m *jsonrpc.Message) (resp *jsonrpc.Message, err error) {
	if l.cfg.Observe != nil {
		var done func(*jsonrpc.Message, error)
		if ctx, done = l.cfg.Observe(ctx, name, m); done != nil {
			defer func() { done(resp, err) }()
		}
	}
	if l.cfg.Hook != nil {
		l.cfg.Hook(true, m)
	}
	answer := p.expect(m.ID)
	if err := t.Send(ctx, m); err != nil {
		return nil, err
	}
	resp, err = p.await(ctx, answer)
	if err == nil && resp.Result != nil {
		// Transports leave checking a result to whoever reads it
		// (jsonrpc.DecodeOwned); an answer of the negotiation is read here.
		if cerr := jsondec.Check(resp.Result); cerr != nil {
			return nil, fmt.Errorf("%s (id %s): the result of the answer is not JSON: %w", m.Method, m.ID, cerr)
		}
	}
	if err == nil && l.cfg.Hook != nil {
		l.cfg.Hook(false, resp)
	}
	return resp, err
}

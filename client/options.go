package client

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/reconnect"
)

// Option configures a Conn, in Dial or Open. An Option that sets a
// default for every call is named WithDefault…; the CallOption that
// overrides it for one call has the same name without Default
// (WithDefaultTimeout, WithTimeout). An On… option adds its handler to
// those given before (nil adds none): given twice, both run, in the
// order given, so that a library's handler and its host's own never
// replace each other. A With… handler (WithSampling) answers: the last
// given wins.
type Option func(*options)

// Default settings.
const (
	// DefaultTimeout is how long a call waits for its answer when neither
	// WithDefaultTimeout nor WithTimeout is given. Each progress
	// notification restarts it.
	DefaultTimeout = 60 * time.Second
)

// Host handlers for server→client requests.
type (
	// SamplingHandler answers sampling/createMessage.
	SamplingHandler func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	// ElicitationHandler answers elicitation/create.
	ElicitationHandler func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error)
	// RootsHandler answers roots/list.
	RootsHandler func(ctx context.Context) ([]mcp.Root, error)
)

type options struct {
	logger         *slog.Logger
	clientInfo     mcp.Implementation
	requestTimeout time.Duration
	maxCallTime    time.Duration

	// HTTP transports
	httpClient *http.Client
	header     http.Header
	auth       *auth.Authorizer

	sampling      SamplingHandler
	elicitForm    ElicitationHandler
	elicitURL     ElicitationHandler
	roots         RootsHandler
	onLog         func(mcp.LoggingMessageParams)
	onToolsChg    func()
	onResChg      func()
	onPromptsChg  func()
	onResUpdated  func(uri string)
	onCancelled   func(mcp.CancelledParams)
	onNotify      func(method string, params []byte)
	transportName string
	hook          MessageHook
	policy        negotiate.TransportPolicy
	era           negotiate.EraPolicy
	version       string
	probeTimeout  time.Duration
	cache         *negotiate.Cache
	replay        bool
	tasks         TaskPolicy
	reconnect     *reconnect.Policy
	onState       func(from, to State)
	onReinit      func(Info)
	observer      Observer
	server        Endpoint // the URL's host and port, for the observer
}

func newOptions(opts []Option) *options {
	o := &options{
		logger:         slog.New(slog.DiscardHandler),
		clientInfo:     mcp.Implementation{Name: "anymcp", Version: Version},
		requestTimeout: DefaultTimeout,
	}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

// Version is the library's version, sent as clientInfo.version by default.
const Version = "0.1.0"

// WithLogger sends the Conn's logs (dropped messages, retries, handler
// failures) to l. The default discards them.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

// WithClientInfo sets the clientInfo sent in initialize.
func WithClientInfo(name, version string) Option {
	return func(o *options) { o.clientInfo = mcp.Implementation{Name: name, Version: version} }
}

// WithDefaultTimeout sets how long a call waits for its answer; each
// progress notification for the call restarts the wait, and the wait does
// not run out while the host answers a request of the server's (an
// elicitation a person fills in may take minutes). Zero or less means
// no timeout. The default is DefaultTimeout; WithTimeout overrides it for
// one call.
func WithDefaultTimeout(d time.Duration) Option {
	return func(o *options) { o.requestTimeout = d }
}

// WithDefaultMaxTime bounds a call's total time, progress or not. Zero
// (the default) means no bound beyond the call's context; WithMaxTime
// overrides it for one call.
func WithDefaultMaxTime(d time.Duration) Option {
	return func(o *options) { o.maxCallTime = d }
}

// WithHTTPClient makes HTTP transports use c for every request: its
// RoundTripper, proxy and TLS settings apply. Its Timeout is not applied to
// long-lived streams. c itself is never changed: the transports use copies
// that carry the library's redirect policy (a redirect to another origin,
// or one that would turn a POST into a GET, is refused with a
// *jsonrpc.RedirectError, and nothing is sent there; see docs/security.md),
// after which c's own CheckRedirect, if any, still runs.
func WithHTTPClient(c *http.Client) Option {
	return func(o *options) { o.httpClient = c }
}

// WithHeader adds a header sent on every HTTP request, e.g. Authorization.
// It goes only to the origin of the URL dialled: never through a redirect
// or an HTTP+SSE endpoint on another origin.
func WithHeader(name, value string) Option {
	return func(o *options) {
		if o.header == nil {
			o.header = make(http.Header)
		}
		o.header.Add(name, value)
	}
}

// WithSampling answers the server's sampling/createMessage requests with h
// and declares the sampling capability.
func WithSampling(h SamplingHandler) Option { return func(o *options) { o.sampling = h } }

// WithElicitation answers form-mode elicitation/create requests with h and
// declares elicitation.form.
func WithElicitation(h ElicitationHandler) Option { return func(o *options) { o.elicitForm = h } }

// WithURLElicitation answers URL-mode elicitation/create requests with h
// and declares elicitation.url.
func WithURLElicitation(h ElicitationHandler) Option { return func(o *options) { o.elicitURL = h } }

// WithRoots answers roots/list with h and declares the roots capability
// (with listChanged: tell the server with Conn.NotifyRootsChanged).
func WithRoots(h RootsHandler) Option { return func(o *options) { o.roots = h } }

// OnLog delivers notifications/message (server log records).
//
// Notification handlers (the On… options for server notifications) run
// one at a time, in arrival order, on a goroutine of the Conn's own: they
// may call the Conn, but a slow one delays the next. The Conn's read loop never waits for them (a handler may
// itself wait for an answer that only the read loop can deliver), so while
// 4,096 notifications, or 16 MiB of their params, wait for the handlers,
// newer ones are dropped — counted by Conn.DroppedNotifications and logged
// — until the handlers catch up. A list_changed notification is never
// dropped: while one of its kind waits for its handler, later ones are
// merged into it. Responses and server requests are never dropped. Below
// the handlers the transport's queue is bounded too: when the read loop
// falls behind, the transport stops reading the connection, and the server
// is slowed by TCP flow control (or, over stdio, blocks on its writes).
func OnLog(f func(mcp.LoggingMessageParams)) Option {
	return func(o *options) { o.onLog = then1(o.onLog, f) }
}

// OnToolsChanged is called on notifications/tools/list_changed; while a
// call waits to run, later ones are merged into it (see OnLog).
func OnToolsChanged(f func()) Option {
	return func(o *options) { o.onToolsChg = then0(o.onToolsChg, f) }
}

// OnResourcesChanged is called on notifications/resources/list_changed;
// while a call waits to run, later ones are merged into it (see OnLog).
func OnResourcesChanged(f func()) Option {
	return func(o *options) { o.onResChg = then0(o.onResChg, f) }
}

// OnPromptsChanged is called on notifications/prompts/list_changed; while
// a call waits to run, later ones are merged into it (see OnLog).
func OnPromptsChanged(f func()) Option {
	return func(o *options) { o.onPromptsChg = then0(o.onPromptsChg, f) }
}

// OnResourceUpdated is called on notifications/resources/updated with the URI.
func OnResourceUpdated(f func(uri string)) Option {
	return func(o *options) { o.onResUpdated = then1(o.onResUpdated, f) }
}

// OnCancelled is called when the server cancels one of its requests to us.
func OnCancelled(f func(mcp.CancelledParams)) Option {
	return func(o *options) { o.onCancelled = then1(o.onCancelled, f) }
}

// OnStateChange is called at every change of the Conn's State, in order.
func OnStateChange(f func(from, to State)) Option {
	return func(o *options) { o.onState = then2(o.onState, f) }
}

// OnReinitialized is called after the Conn re-initialized a lost or
// expired session (and restored its resource subscriptions), with what the
// new handshake negotiated.
func OnReinitialized(f func(Info)) Option {
	return func(o *options) { o.onReinit = then1(o.onReinit, f) }
}

// OnNotification is called for every notification the Conn has no typed
// handler for, with the raw params.
func OnNotification(f func(method string, params []byte)) Option {
	return func(o *options) { o.onNotify = then2(o.onNotify, f) }
}

// WithTransportPolicy chooses which HTTP transports Dial tries for a URL,
// and in what order; the default is negotiate.TransportAuto.
func WithTransportPolicy(p negotiate.TransportPolicy) Option {
	return func(o *options) { o.policy = p }
}

// WithReconnectPolicy sets how HTTP transports retry once connected:
// resuming a broken stream, reconnecting the GET or HTTP+SSE stream,
// waiting out 429 and 503 (a 503 without Retry-After only for a call the
// Conn would replay anyway: see WithReplay and AsReplayable); and how long the Conn keeps re-initializing
// and sending again a call that sessions keep refusing as expired (its
// MaxAttempts count the sessions that refused the call, its Budget runs
// from the first refusal). The default is reconnect.DefaultPolicy(). (A
// stdio server is supervised only when its Target says so: Supervised.)
func WithReconnectPolicy(p reconnect.Policy) Option {
	return func(o *options) { o.reconnect = &p }
}

// WithEra chooses which protocol eras Dial and Open try: negotiate.EraAuto
// (the default: the stateless request first, then initialize),
// negotiate.StatelessOnly or negotiate.InitializeOnly.
func WithEra(p negotiate.EraPolicy) Option { return func(o *options) { o.era = p } }

// WithProtocolVersion pins the protocol revision: only it is offered (in
// _meta for a stateless one, in initialize for an initialize-era one), and a server
// that does not speak it is an error. "" (the default) lets the Conn
// choose the newest both sides speak.
func WithProtocolVersion(v string) Option { return func(o *options) { o.version = v } }

// WithProbeTimeout bounds how long Dial (for a command) and Open wait for
// the answer to the stateless probe, server/discover, before they take the
// server for an initialize-era one and send initialize: an initialize-era server may stay
// silent. Should the server then take initialize, its answer to the probe
// is waited for once more as long (a stateless server slow to start answers
// it late, and one that handles requests concurrently may answer
// initialize first): a server that never answers the probe costs twice
// this. The default is negotiate.DefaultProbeTimeout. Over HTTP the status
// answers at once and this does not apply.
func WithProbeTimeout(d time.Duration) Option { return func(o *options) { o.probeTimeout = d } }

// WithCache shares a negotiation cache across Dials: the era and transport
// found for a URL (or a command line) are tried first next time, so that a
// server known to be initialize-era costs no stateless probe, and one known to speak
// HTTP+SSE no Streamable HTTP probe either.
func WithCache(c *negotiate.Cache) Option { return func(o *options) { o.cache = c } }

// WithTransportName sets the name Info reports for a custom transport.
func WithTransportName(name string) Option { return func(o *options) { o.transportName = name } }

// CallOption configures one call: With… sets what the call carries or
// how long it may take, As… how it is treated (AsTask, AsReplayable), On…
// what it calls back (OnTask).
type CallOption func(*callOptions)

type callOptions struct {
	progress   func(mcp.ProgressParams)
	timeout    time.Duration
	maxTime    time.Duration
	repeatable bool
	asTask     bool           // AsTask
	onTask     func(mcp.Task) // OnTask
	// retried, when set, is told whether the answer came to a retry
	// carrying inputResponses or requestState (multi round-trip).
	retried *bool
	// forClient, when set, are the capabilities of the client the call is
	// made for (ForClient).
	forClient json.RawMessage
	logs      *callLogs // WithCallLogs'
}

// callLogs are WithCallLogs' function and level.
type callLogs struct {
	f     func(mcp.LoggingMessageParams)
	level mcp.LoggingLevel
}

// AsReplayable says the host knows this call is safe to run twice:
// should its answer be lost (a broken stream, a lost connection), the Conn
// sends it again as a new request instead of failing with an error
// matching jsonrpc.ErrOutcomeUnknown. Without it only requests that are
// safe by their nature are sent again (see WithReplay).
func AsReplayable() CallOption { return func(c *callOptions) { c.repeatable = true } }

// WithCallLogs delivers to f, in order, the log records
// (notifications/message) the server sends in the course of this call, in
// place of OnLog: those that come on the call's own stream, which only
// Streamable HTTP has (the answer to the call's POST, streamed as SSE). A
// stateless (2026-07-28) server is asked for records at level and above in
// the request's _meta ("": info); an initialize-era server sends what its session's
// level (SetLogLevel) lets through, and sends a call's records on the
// call's stream or its GET stream, as it chooses: those on the GET stream,
// and any over stdio or HTTP+SSE, go to OnLog. f runs on the Conn's read
// loop, as WithProgress's does: it must return quickly and must not call
// the Conn.
func WithCallLogs(level mcp.LoggingLevel, f func(mcp.LoggingMessageParams)) CallOption {
	if level == "" {
		level = mcp.LevelInfo
	}
	cl := &callLogs{f: f, level: level}
	return func(o *callOptions) { o.logs = cl }
}

// WithProgress attaches a progress token to the call and delivers the
// server's notifications/progress for it to f, in order. Updates that travel
// with the answer (stdio, HTTP+SSE, a Streamable HTTP answer streamed as
// SSE) all reach f before the call returns; a server that answers with JSON
// sends progress on its GET stream, and an update that trails the answer is
// dropped. f runs on the Conn's read loop: it must return quickly and must
// not call the Conn. A slow f holds the reading of the connection back (the
// server is pushed back; nothing is dropped). Given twice, both run, in
// the order given.
func WithProgress(f func(mcp.ProgressParams)) CallOption {
	return func(c *callOptions) { c.progress = then1(c.progress, f) }
}

// WithTimeout overrides the Conn's default timeout (WithDefaultTimeout)
// for this call: how long to wait for the answer, restarted by progress.
func WithTimeout(d time.Duration) CallOption {
	return func(c *callOptions) { c.timeout = d }
}

// WithMaxTime overrides the Conn's default maximum time
// (WithDefaultMaxTime) for this call.
func WithMaxTime(d time.Duration) CallOption {
	return func(c *callOptions) { c.maxTime = d }
}

package fleet

import (
	"context"
	"log/slog"
	"time"

	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/pin"
	"github.com/anymcp/anymcp/reconnect"
)

// Defaults of the options.
const (
	DefaultConnectTimeout = 30 * time.Second
	DefaultMaxDials       = 32
	DefaultMaxSpawns      = 8
	DefaultStartupGrace   = time.Second
	DefaultIdleStop       = 10 * time.Minute
)

// DefaultRetryPolicy is how long a server that failed is left alone by
// default: 1 s, doubling after each failure up to 5 min, ± 10 %.
func DefaultRetryPolicy() reconnect.Policy {
	return reconnect.Policy{InitialDelay: time.Second, MaxDelay: 5 * time.Minute, Multiplier: 2, Jitter: 0.1}
}

// Option configures a Fleet, in New.
type Option func(*options)

type options struct {
	connectTimeout time.Duration
	maxDials       int
	maxSpawns      int
	startupGrace   time.Duration
	eager          bool
	idleStop       time.Duration
	retry          reconnect.Policy
	toolFilter     func(server string, t mcp.Tool) bool
	pins           *pin.Pins
	logger         *slog.Logger
	sampling       func(ctx context.Context, server string, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)
	elicitation    func(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error)
	roots          func(ctx context.Context, server string) ([]mcp.Root, error)
	onLog          func(server string, p mcp.LoggingMessageParams)
	onProgress     func(server, tool string, p mcp.ProgressParams)
	onState        func(from, to Status)

	// onHeard, for tests, is told (with the member's lock held) when a
	// server's listing of kind k was made stale by what its Conn heard.
	onHeard func(server string, k kind)
}

func defaultOptions() options {
	return options{
		connectTimeout: DefaultConnectTimeout,
		maxDials:       DefaultMaxDials,
		maxSpawns:      DefaultMaxSpawns,
		startupGrace:   DefaultStartupGrace,
		idleStop:       DefaultIdleStop,
		retry:          DefaultRetryPolicy(),
		logger:         slog.New(slog.DiscardHandler),
	}
}

// WithConnectTimeout bounds each server's dial and first listing (a
// Server's own ConnectTimeout overrides it); DefaultConnectTimeout when
// not given. The time starts when the dial starts, not while it waits for
// its turn (WithMaxDials).
func WithConnectTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.connectTimeout = d
		}
	}
}

// WithMaxDials bounds how many URL servers are connected at once;
// DefaultMaxDials when not given. A dial holds its slot until its server
// answered the handshake or failed, or for WithStartupGrace, whichever
// comes first: a server that does not answer keeps no other waiting
// beyond the grace.
func WithMaxDials(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxDials = n
		}
	}
}

// WithMaxSpawns bounds how many command (stdio) servers are started at
// once, the expensive part of a fleet (npx, uvx); DefaultMaxSpawns when
// not given. A start holds its slot until its server answered the
// handshake or failed, or for WithStartupGrace, whichever comes first.
func WithMaxSpawns(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxSpawns = n
		}
	}
}

// WithStartupGrace is how long a dial or start keeps its slot
// (WithMaxDials, WithMaxSpawns) while its server has not answered:
// past it, the process is running or the request sent, and the server
// waits for its connect timeout without holding back the others.
// DefaultStartupGrace when not given; 0 keeps the slot for the whole
// dial, up to the connect timeout.
func WithStartupGrace(d time.Duration) Option {
	return func(o *options) { o.startupGrace = max(d, 0) }
}

// WithEager makes New start dialling every enabled server at once, in
// parallel (still WithMaxDials and WithMaxSpawns at a time), instead of on first use.
func WithEager() Option { return func(o *options) { o.eager = true } }

// WithIdleStop stops a stdio server that no call has used for d; it is
// started again on next use. DefaultIdleStop when not given; 0 never
// stops one. HTTP servers are never stopped.
func WithIdleStop(d time.Duration) Option {
	return func(o *options) { o.idleStop = max(d, 0) }
}

// WithRetryPolicy sets how long a server that failed is left alone: a
// use before the wait ends gets the recorded failure without a dial. The
// fleet reads p's InitialDelay, MaxDelay, Multiplier and Jitter; a zero
// field takes DefaultRetryPolicy's. A fleet tries again on a later use
// for as long as it lives, so MaxAttempts and Budget do not apply. Each
// server's own Conn takes its policy from client.WithReconnectPolicy.
func WithRetryPolicy(p reconnect.Policy) Option {
	return func(o *options) {
		d := DefaultRetryPolicy()
		if p.InitialDelay > 0 {
			d.InitialDelay = p.InitialDelay
		}
		if p.MaxDelay > 0 {
			d.MaxDelay = p.MaxDelay
		}
		if p.Multiplier > 0 {
			d.Multiplier = p.Multiplier
		}
		if p.Jitter != 0 {
			d.Jitter = max(p.Jitter, 0)
		}
		d.MaxDelay = max(d.MaxDelay, d.InitialDelay)
		o.retry = d
	}
}

// WithToolFilter leaves out of the catalogue (and refuses to call) the
// tools keep reports false for; it runs after a Server's Allow and Deny.
func WithToolFilter(keep func(server string, t mcp.Tool) bool) Option {
	return func(o *options) { o.toolFilter = keep }
}

// WithPins holds every tool to the definition p approved (docs/pinning.md):
// a tool whose definition changed is left out of the catalogue, its
// server is in Catalogue.Errors (KindHeld), and CallTool returns its
// *pin.ChangedError without calling it, until p.Approve. A tool is pinned
// under the key "SERVER/TOOL": the server's name ("~" and "/" written
// "~0" and "~1") and the tool's own name, which a server cannot change
// by listing other tools, as it can a fleet name.
func WithPins(p *pin.Pins) Option {
	return func(o *options) { o.pins = p }
}

// WithLogger sends the fleet's logs (dials, failures, idle stops) to l.
// The default discards them.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.logger = l
		}
	}
}

// WithSampling answers every server's sampling/createMessage with h,
// told which server asks.
func WithSampling(h func(ctx context.Context, server string, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error)) Option {
	return func(o *options) { o.sampling = h }
}

// WithElicitation answers every server's elicitation/create, in form and
// URL mode (p.Mode), with h, told which server asks.
func WithElicitation(h func(ctx context.Context, server string, p *mcp.ElicitParams) (*mcp.ElicitResult, error)) Option {
	return func(o *options) { o.elicitation = h }
}

// WithRoots answers every server's roots/list with h, told which server
// asks.
func WithRoots(h func(ctx context.Context, server string) ([]mcp.Root, error)) Option {
	return func(o *options) { o.roots = h }
}

// OnLog delivers every server's log records (notifications/message); a
// server's own client.OnLog is told too, after f.
func OnLog(f func(server string, p mcp.LoggingMessageParams)) Option {
	return func(o *options) { o.onLog = f }
}

// OnProgress delivers the progress of every CallTool, with the server
// and the tool's original name; a call's own client.WithProgress is told
// too, after f. f runs on the connection's read loop: it must return
// quickly.
func OnProgress(f func(server, tool string, p mcp.ProgressParams)) Option {
	return func(o *options) { o.onProgress = f }
}

// OnStateChange is told of every change of a server's state, in order,
// one at a time, on a goroutine of the fleet's: the server's Status
// before and after, as client.OnStateChange is told a Conn's. The Status
// says which server, and why it failed. It may call the Fleet.
func OnStateChange(f func(from, to Status)) Option {
	return func(o *options) { o.onState = f }
}

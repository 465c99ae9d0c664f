package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/anymcp/anymcp/httpopt"
	"github.com/anymcp/anymcp/internal/ladder"
	"github.com/anymcp/anymcp/internal/origin"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/reconnect"
	"github.com/anymcp/anymcp/stdio"
)

// Target is what Dial connects to: a server URL or a command to start.
type Target struct {
	url string
	cmd *stdio.Command
}

// URL targets an MCP server at an http(s) URL.
func URL(u string) Target { return Target{url: u} }

// Command targets a local server started as name with args, spoken to
// over its stdin and stdout. The child gets only a small allowlist of the
// environment (HOME, LOGNAME, PATH, SHELL, TERM, USER); add to it with
// WithEnv, or pass it all with InheritEnv.
func Command(name string, args ...string) Target {
	return Target{cmd: &stdio.Command{Path: name, Args: args}}
}

// Process targets a local server described in full by cmd.
func Process(cmd stdio.Command) Target { return Target{cmd: &cmd} }

// WithEnv adds "KEY=VALUE" entries to a command's environment.
func (t Target) WithEnv(kv ...string) Target {
	if t.cmd != nil {
		c := *t.cmd
		c.Env = append(append([]string(nil), c.Env...), kv...)
		t.cmd = &c
	}
	return t
}

// InDir sets a command's working directory.
func (t Target) InDir(dir string) Target {
	if t.cmd != nil {
		c := *t.cmd
		c.Dir = dir
		t.cmd = &c
	}
	return t
}

// InheritEnv gives a command the whole environment of this process.
func (t Target) InheritEnv() Target {
	if t.cmd != nil {
		c := *t.cmd
		c.InheritEnv = true
		t.cmd = &c
	}
	return t
}

// Supervised restarts a command's process when it dies, waiting as p says
// between attempts; the Conn then re-initializes the new process. Calls in
// flight at the death fail as outcome unknown, with the exit status and
// the stderr tail. Off by default.
func (t Target) Supervised(p reconnect.Policy) Target {
	if t.cmd != nil {
		c := *t.cmd
		c.Restart = &p
		t.cmd = &c
	}
	return t
}

// String returns the URL, or the command line.
// IsCommand reports whether t starts a local process (Command), not a
// URL.
func (t Target) IsCommand() bool { return t.cmd != nil }

func (t Target) String() string {
	if t.cmd != nil {
		return fmt.Sprint(append([]string{t.cmd.Path}, t.cmd.Args...))
	}
	return t.url
}

// Transport names reported by Info.
const (
	TransportStreamableHTTP = negotiate.StreamableHTTP
	TransportSSE            = negotiate.SSE
	TransportStdio          = negotiate.Stdio
)

// ErrNoTarget is returned by Dial for an empty Target.
var ErrNoTarget = errors.New("anymcp: no target: give a URL or a command")

// Dial connects to target and finds out what it speaks: the era (the
// stateless request first — server/discover — then the initialize) and,
// for a URL, the transport (Streamable HTTP, then HTTP+SSE), as the
// specification's backward-compatibility rules say; Info().Negotiation tells
// how it went. ctx bounds the connecting and the handshake (when ctx has no
// deadline, the request timeout does); the Conn lives until Close.
func Dial(ctx context.Context, target Target, opts ...Option) (*Conn, error) {
	o := newOptions(opts)
	ctx, cancel := bounded(ctx, o)
	defer cancel()
	if target.cmd == nil && target.url == "" {
		return nil, ErrNoTarget
	}
	return dial(ctx, ladder.Target{URL: target.url, Command: target.cmd}, o)
}

// hello builds the opening requests of both eras, as the options say.
func hello(o *options) (ladder.Hello, error) {
	var h ladder.Hello
	params, err := json.Marshal(initializeParams(o))
	if err != nil {
		return h, fmt.Errorf("initialize: encoding params: %w", err)
	}
	h.Initialize = &jsonrpc.Message{ID: jsonrpc.Int(1), Method: "initialize", Params: params}
	h.Discover = func(version string) *jsonrpc.Message {
		d := newDialect(mcp.EraStateless, version, "", nil, o)
		params, _ := withMeta(nil, d.meta)
		return &jsonrpc.Message{ID: jsonrpc.Int(1), Method: "server/discover", Params: params}
	}
	return h, nil
}

// sharedHTTP is the HTTP client of Conns whose host gave none: one
// connection pool for the process, as http.DefaultClient has, but sized for
// many calls in flight to one server (http.DefaultTransport keeps 2 idle
// connections per host, so a busy Conn would keep dialing new ones).
var sharedHTTP = func() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = maxIdleConnsPerHost
	return &http.Client{Transport: t}
}()

// maxIdleConnsPerHost is how many idle connections to one server the
// shared pool keeps: as many as a busy Conn has calls in flight at once,
// within reason.
const maxIdleConnsPerHost = 128

// config is the negotiation's configuration, as the options say.
func config(o *options) ladder.Config {
	hc := o.httpClient
	if hc == nil {
		hc = sharedHTTP
	}
	return ladder.Config{
		Common:       httpopt.Common{HTTPClient: hc, Header: o.header, Logger: o.logger, Reconnect: o.reconnect},
		Policy:       o.policy,
		Era:          o.era,
		Version:      o.version,
		ProbeTimeout: o.probeTimeout,
		Cache:        o.cache,
		Hook:         o.hook,
		// The GET stream opens when the host listens (see openStream).
		StreamOnDemand: true,
		Observe:        o.handshakeObserver(),
	}
}

// bounded returns ctx bounded for a handshake: without a deadline of the
// caller's, a handshake is bounded as any request is, by the request
// timeout.
func bounded(ctx context.Context, o *options) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok || o.requestTimeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, o.requestTimeout)
}

// handshake finds the era of the server behind t, a host's own
// transport, and finishes the handshake; on failure t is closed.
func handshake(ctx context.Context, t jsonrpc.Transport, o *options) (*Conn, error) {
	h, err := hello(o)
	if err != nil {
		jsonrpc.Shutdown(ctx, t) //nolint:errcheck // the handshake's error is the one to report
		return nil, err
	}
	cfg := config(o)
	cfg.Label = o.transportName
	res, err := ladder.Handshake(ctx, t, o.transportName, h, cfg)
	if err != nil {
		jsonrpc.Shutdown(ctx, t) //nolint:errcheck // bounded by ctx: a cancelled Dial returns at once
		return nil, err
	}
	return establish(ctx, res, o)
}

// dial runs the ladder for target (ladder.Dial: a URL, or a command it
// starts), then finishes the handshake on whichever era and transport
// answered.
func dial(ctx context.Context, target ladder.Target, o *options) (*Conn, error) {
	h, err := hello(o)
	if err != nil {
		return nil, err
	}
	if target.URL != "" && o.observer != nil {
		o.server = endpointOf(target.URL)
	}
	cfg := config(o)
	if target.URL != "" {
		if cfg.HTTPClient, err = o.authorizedClient(target.URL); err != nil {
			return nil, err
		}
	}
	res, err := ladder.Dial(ctx, target, h, cfg)
	if err != nil {
		return nil, err
	}
	o.transportName = res.Name
	c, err := establish(ctx, res, o)
	if err == nil || target.URL == "" || res.Era != mcp.EraInitialize || h.Discover == nil || cfg.Era == negotiate.InitializeOnly || !refusedAsStateless(err) {
		return c, err
	}
	// The server took initialize, then refused what followed as only a
	// stateless server does (a stateless-only server that answers initialize to
	// tell old clients its revision, then rejects the rest): it is a
	// stateless server after all.
	rawURL := target.URL
	o.logger.Info("anymcp: the server took initialize but refused the handshake as a stateless server does; trying the stateless request", "url", origin.RedactString(rawURL), "err", err)
	cfg.Cache.Forget(rawURL)
	cfg.Era = negotiate.StatelessOnly
	res2, err2 := ladder.Dial(ctx, target, h, cfg)
	if err2 != nil {
		return nil, fmt.Errorf("%w; then the stateless request: %w", err, err2)
	}
	res2.Report.Attempts = append(res.Report.Attempts, res2.Report.Attempts...)
	cfg.Cache.Store(rawURL, res2.Name, res2.Era)
	return establish(ctx, res2, o)
}

// refusedAsStateless reports whether err, the failure of an initialize handshake
// after initialize was answered, is a refusal that says the server speaks a
// stateless revision: a 400 (or a JSON-RPC error) naming an unsupported
// protocol version.
func refusedAsStateless(err error) bool {
	var he *jsonrpc.HTTPError
	if errors.As(err, &he) && (he.StatusCode == 400 || he.StatusCode == 404) {
		if he.RPCError != nil && he.RPCError.Code == jsonrpc.CodeUnsupportedProtocolVersion {
			return true
		}
		body := strings.ToLower(he.Body)
		return strings.Contains(body, "protocol version") || strings.Contains(body, mcp.Version20260728)
	}
	var rpcErr *jsonrpc.Error
	return errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeUnsupportedProtocolVersion
}

// establish makes a Conn of a negotiated transport and finishes the era's
// handshake: for an initialize-era server, checks the initialize answer and sends
// notifications/initialized; for a stateless one, records its discover answer.
func establish(ctx context.Context, res *ladder.Result, o *options) (*Conn, error) {
	c := newConn(res.Transport, o)
	c.nextID.Store(res.NextID - 1)
	c.droppedNotifications.Add(int64(res.DroppedNotifications)) // negotiate logged them
	c.mu.Lock()
	c.info.Transport = res.Name
	c.info.Negotiation = res.Report
	c.mu.Unlock()
	var err error
	switch res.Era {
	case mcp.EraStateless:
		err = c.finishDiscover(res.Version, res.Response)
		if err == nil {
			c.startListening()
		}
	default:
		if res.Response.Error != nil {
			err = fmt.Errorf("initialize: %w", res.Response.Error)
		} else {
			err = c.finishInitialize(ctx, initializeParams(o).ProtocolVersion, res.Response.Result)
		}
	}
	if err != nil {
		c.Shutdown(ctx) //nolint:errcheck // bounded by ctx: a cancelled Dial returns at once
		return nil, &HandshakeError{Transport: res.Name, Era: string(res.Era), Report: res.Report, Err: err}
	}
	c.opened(ctx)
	return c, nil
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/stdio"
)

// session is a live connection for one command.
type session struct {
	conn     *client.Conn
	info     client.Info
	trace    *tracer
	progress *progressView
	target   *target
	c        *cli
	stderr   *lineWriter // a stdio server's stderr, on its way to ours; nil over HTTP
	// stream follows the event streams GETs open (Streamable HTTP's
	// standalone stream), for the drain at the end (logdrain.go).
	stream *standaloneStream
}

// connected wraps a command body that needs a connection. The command's
// own arguments (everything before the target) are counted by its Args
// (targetArgs), before connecting.
func (c *cli) connected(body func(ctx context.Context, s *session, own []string) error) func(*cobra.Command, []string) error {
	return c.runE(func(cmd *cobra.Command, args []string) error {
		own, t, err := c.splitTarget(cmd, args)
		if err != nil {
			return err
		}
		s, err := c.dial(cmd.Context(), t)
		if err != nil {
			return err
		}
		defer s.close(cmd.Context())
		return body(cmd.Context(), s, own)
	})
}

// dial connects to t with every connection flag applied.
func (c *cli) dial(ctx context.Context, t *target) (*session, error) {
	s := &session{c: c, target: t, stream: &standaloneStream{}}
	if c.f.trace != "" {
		tr, err := openTrace(c.f.trace, c.stderr, c.sec)
		if err != nil {
			return nil, err
		}
		s.trace = tr
	}
	s.progress = newProgressView(c.stderr, c.f.json, c.stderrTTY)

	opts := []client.Option{
		client.WithClientInfo("mcpcall", moduleVersion()),
		client.WithLogger(c.log),
		client.WithDefaultTimeout(c.f.timeout),
		client.WithMessageHook(s.hook),
		client.OnLog(func(p mcp.LoggingMessageParams) {
			serverLog(c.serverLog, p)
			s.stream.active()
		}),
	}
	if c.tel != nil {
		opts = append(opts, c.tel.option())
	}
	era, err := negotiate.ParseEraPolicy(c.f.era)
	if err != nil {
		return nil, usageErr("--era: %v", err)
	}
	opts = append(opts, client.WithEra(era))
	if c.probeTimeout > 0 {
		opts = append(opts, client.WithProbeTimeout(c.probeTimeout))
	}
	answers, err := c.answerOptions()
	if err != nil {
		return nil, err
	}
	if t.socket == "" || c.answers.given() {
		// Through a session, a client that can answer nothing is served
		// by the gateway's one upstream connection, where the state is;
		// one that can answer gets a connection of its own (docs/sessions.md).
		opts = append(opts, answers...)
	}
	if c.f.protocol != "" {
		if mcp.EraOf(c.f.protocol) == "" {
			return nil, usageErr("--protocol-version %s: this client speaks %s", c.f.protocol, strings.Join(negotiate.ClientVersions(), ", "))
		}
		opts = append(opts, client.WithProtocolVersion(c.f.protocol))
	}
	var ct client.Target
	var cmd stdio.Command
	if t.isCommand() {
		cmd = *t.cmd
		cmd.Logger = c.log
		if c.f.json {
			cmd.StderrLogger = slog.New(slog.NewJSONHandler(c.stderr, nil))
		} else {
			s.stderr = &lineWriter{w: c.stderr}
			cmd.Stderr = s.stderr
		}
		c.run.lastTr = client.TransportStdio
		c.run.stderrShown = true
	} else {
		ct = client.URL(t.url)
		c.run.lastURL = t.url
		for _, h := range t.header {
			opts = append(opts, client.WithHeader(h[0], h[1]))
		}
		opts = append(opts, client.WithTransportPolicy(t.policy))
		base := http.DefaultTransport
		if t.socket != "" { // a session: its gateway holds the credentials
			base = socketClient(t.socket).Transport
			c.run.lastURL = "unix:" + t.socket
		}
		rt := &roundTripper{base: base, t: s.trace, stream: s.stream}
		opts = append(opts, client.WithHTTPClient(&http.Client{Transport: rt}))
		if !hasAuthorization(t) && t.socket == "" {
			// Stored tokens are sent and refreshed; a login is never
			// started here (see mcpcall auth login).
			cfg, err := c.authConfig(t)
			if err != nil {
				s.trace.Close()
				return nil, err
			}
			a, err := newAuthorizer(cfg)
			if err != nil {
				s.trace.Close()
				return nil, err
			}
			opts = append(opts, client.WithAuth(a))
			c.run.lastTarget = t
			c.run.tokenAnswers = &tokenAnswers{}
			rt.tokens = c.run.tokenAnswers
		}
	}

	start := time.Now()
	dctx, cancel := context.WithCancel(ctx)
	if c.f.connectTimeout > 0 { // 0: no limit, as for --timeout and --max-time
		dctx, cancel = context.WithTimeoutCause(ctx, c.f.connectTimeout, errConnectTimeout)
	}
	defer cancel()
	c.log.Debug("connecting", "target", t.display)
	var conn *client.Conn
	if t.isCommand() {
		ct = client.Process(cmd)
	}
	conn, err = client.Dial(dctx, ct, opts...)
	if err != nil {
		s.flushStderr()
		s.trace.Close()
		var negErr *negotiate.Error
		var hsErr *client.HandshakeError
		switch {
		case errors.As(err, &hsErr): // a transport was chosen, and the handshake on it failed
			c.showReport(hsErr.Report)
			c.run.lastTr = hsErr.Transport
		case errors.As(err, &negErr) && negErr.Report != nil:
			c.showReport(negErr.Report)
			if n := len(negErr.Report.Attempts); n > 0 {
				c.run.lastTr = negErr.Report.Attempts[n-1].Transport // the one that failed last
			}
		}
		if dctx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("%w: %w", context.Cause(dctx), err)
		}
		return nil, &connectError{fmt.Errorf("connecting to %s: %w", t.display, err)}
	}
	s.conn, s.info = conn, conn.Info()
	c.run.lastTr = s.info.Transport
	c.showNegotiation(s.info, time.Since(start))
	if c.logLevelSet && s.info.Capabilities.Logging != nil {
		lvl, _, _ := parseLogLevel(c.f.logLevel)
		if err := conn.SetLogLevel(ctx, lvl); err != nil {
			c.log.Warn("logging/setLevel failed", "err", err)
		}
	}
	return s, nil
}

// showReport prints, with -v, the report of a failed negotiation.
func (c *cli) showReport(r *negotiate.Report) {
	if !c.f.verbose || r == nil {
		return
	}
	if c.f.json {
		b, _ := json.Marshal(map[string]any{"negotiation": r})
		fmt.Fprintf(c.stderr, "%s\n", b)
		return
	}
	fmt.Fprint(c.stderr, r.String())
}

// showNegotiation prints, with -v, what was negotiated.
func (c *cli) showNegotiation(info client.Info, took time.Duration) {
	if !c.f.verbose {
		return
	}
	if c.f.json {
		b, _ := json.Marshal(map[string]any{"negotiation": info.Negotiation, "transport": info.Transport, "era": info.Era, "protocolVersion": info.ProtocolVersion, "serverInfo": info.ServerInfo})
		fmt.Fprintf(c.stderr, "%s\n", b)
		return
	}
	if info.Negotiation != nil {
		fmt.Fprint(c.stderr, info.Negotiation.String())
	}
	fmt.Fprintf(c.stderr, "connected in %v: transport %s, protocol %s (%s era), server %s %s\n",
		took.Round(time.Millisecond), info.Transport, info.ProtocolVersion, info.Era, info.ServerInfo.Name, info.ServerInfo.Version)
}

// hook sees every message, for the trace.
func (s *session) hook(sent bool, m *jsonrpc.Message) {
	if s.trace != nil {
		s.trace.message(sent, m)
	}
}

// callOptions are the options of a request that may report progress, or
// become a task.
func (s *session) callOptions() []client.CallOption {
	return []client.CallOption{client.WithProgress(s.progress.update), client.OnTask(s.progress.task)}
}

// close ends the connection and the trace: promptly once the run's
// context is done (shutdownContext).
func (s *session) close(run context.Context) {
	s.drainLogs(run)
	s.progress.finish()
	s.c.prompt.stop()
	ctx, cancel := shutdownContext(run)
	defer cancel()
	if err := s.conn.Shutdown(ctx); err != nil {
		s.c.log.Debug("closing the connection", "err", err)
	}
	s.flushStderr()
	if err := s.trace.Close(); err != nil {
		s.c.log.Warn("--trace", "err", err)
	}
}

// drainLogs waits, when the server's logs were asked for, for those still
// on their way on Streamable HTTP's standalone stream (logdrain.go): only
// in the initialize era (the stateless era has no such stream, and
// HTTP+SSE and stdio bring everything on the one stream the answer came
// on, after the logs sent before it), only while such a stream is open,
// and not once the run is over its limit or interrupted.
func (s *session) drainLogs(run context.Context) {
	if !s.c.logLevelSet || s.info.Transport != client.TransportStreamableHTTP || s.info.Era != mcp.EraInitialize || run.Err() != nil {
		return
	}
	if waited := s.stream.drain(run, logDrainQuiet, logDrainGrace); waited > 0 {
		s.c.log.Debug("waited for the server's logs on the standalone stream", "took", waited.Round(time.Millisecond))
	}
}

// flushStderr writes what is left of a stdio server's last stderr line,
// once its process is gone.
func (s *session) flushStderr() {
	if s.stderr != nil {
		s.stderr.Flush()
	}
}

// callFailed passes a request's error on. (Conn.Close lets a pending
// notifications/cancelled go out before it closes the transport.)
func (s *session) callFailed(_ context.Context, err error) error { return err }

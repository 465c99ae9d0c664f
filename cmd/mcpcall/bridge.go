package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/anymcp/anymcp/bridge"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/negotiate"
)

// bridgeFlags are mcpcall bridge's own flags.
type bridgeFlags struct {
	listen        string
	allowRemote   bool
	authTokenFile string
	stateKeyFile  string
	replicaID     string
	origins       []string
	hosts         []string
	// bridge --all (gatewaycmd.go)
	all     bool
	gateway string
	view    string
}

// Environment variables the bridge reads its secrets from when no file
// is given.
const (
	envBridgeToken    = "MCPCALL_BRIDGE_TOKEN"
	envBridgeStateKey = "MCPCALL_BRIDGE_STATE_KEY"
)

func (c *cli) bridgeCommand() *cobra.Command {
	var bf bridgeFlags
	cmd := &cobra.Command{
		Use:   "bridge TARGET | --all",
		Short: "Serve the target to clients of every protocol era (stdio, or HTTP with --listen)",
		Long: `Serve the target, any server mcpcall reaches (a URL of any era or transport,
with the OAuth tokens of mcpcall auth login, or a command), as an MCP server
of its own. Without --listen it serves stdio, both eras: a drop-in for
"npx mcp-remote URL" in an MCP config file. With --listen ADDR it serves
HTTP: /mcp for revision 2026-07-28 (stateless) and the initialize era
(sessions), /sse for 2024-11-05 clients. The bound address is printed on
stderr as "listening on http://ADDR/mcp".

The listener binds loopback only unless --allow-remote is given, which also
needs a bearer token (--auth-token-file, or $` + envBridgeToken + `). The state of
input_required rounds is sealed with AES-GCM under --state-key-file (or
$` + envBridgeStateKey + `, hex or raw bytes: 16, 24 or 32), else a random key per process;
replicas behind one load balancer share the key. See docs/bridge.md.

` + gatewayHelp,
		Example: `  mcpcall bridge https://example.com/mcp                  # stdio, for a desktop host's config
  mcpcall bridge --listen 127.0.0.1:8080 -- npx -y @modelcontextprotocol/server-everything
  mcpcall bridge --all --listen 127.0.0.1:8080 --gateway gateway.json`,
		ValidArgsFunction: c.completeTarget(0),
		Args:              c.fleetArgs(&bf.all, 0, c.targetArgs(0, 0)),
		RunE: c.runE(func(cmd *cobra.Command, args []string) error {
			if bf.all {
				return c.runGateway(cmd.Context(), &bf)
			}
			if bf.gateway != "" || bf.view != "" {
				return usageErr("--gateway and --view serve a fleet: give --all")
			}
			_, t, err := c.splitTarget(cmd, args)
			if err != nil {
				return err
			}
			if t.socket != "" {
				return usageErr("bridge: the target is a session (%s); bridge its server instead", t.display)
			}
			return c.runBridge(cmd.Context(), &bf, t)
		}),
	}
	f := cmd.Flags()
	f.StringVar(&bf.listen, "listen", "", "serve HTTP at `ADDR` (host:port; port 0 picks one) instead of stdio")
	f.BoolVar(&bf.allowRemote, "allow-remote", false, "let --listen bind an address other than loopback (needs a bearer token)")
	f.StringVar(&bf.authTokenFile, "auth-token-file", "", "HTTP clients must send Authorization: Bearer with the token in `FILE` (default: $"+envBridgeToken+")")
	f.StringVar(&bf.stateKeyFile, "state-key-file", "", "seal input_required state under the key in `FILE` (default: $"+envBridgeStateKey+", else a random key)")
	f.StringVar(&bf.replicaID, "replica-id", "", "this process's name in the state it seals (default: random)")
	f.StringArrayVar(&bf.origins, "allow-origin", nil, "accept this Origin (scheme://host[:port]) besides loopback ones (repeatable)")
	f.StringArrayVar(&bf.hosts, "allow-host", nil, "accept this Host besides loopback ones (repeatable)")
	f.BoolVar(&bf.all, "all", false, "serve every server of the config files as one MCP server, each tool under its fleet name")
	f.StringVar(&bf.gateway, "gateway", "", "with --all: views, approvals, pins and access from the JSON `FILE` (docs/mcpcall.md)")
	f.StringVar(&bf.view, "view", "", "with --all and no --listen: the `NAME` of the view served on stdio (default: the default view)")
	// The bridge answers the upstream's requests itself (no answer flags)
	// and shows neither its messages nor its logs (no --trace, --log-level).
	c.addFlags(cmd, "config")
	c.addFlags(cmd, oneServerConnFlags...)
	c.addFlags(cmd, protocolFlags...)
	c.addFlags(cmd, limitFlags...)
	c.addOAuthFlags(cmd)
	return cmd
}

// bridgeDialer returns the Dialer of t with every connection flag applied:
// headers, the transport policy, stored OAuth tokens, the era. The
// bridge's own handlers answer the upstream's questions, never mcpcall's
// --elicit or --sampling-cmd.
func (c *cli) bridgeDialer(t *target) (bridge.Dialer, []string, error) {
	opts := []client.Option{client.WithLogger(c.log), client.WithDefaultTimeout(c.f.timeout)}
	if c.tel != nil {
		// OTEL_* set: the upstream requests are CLIENT spans, children of
		// the downstream requests' trace context (docs/observability.md).
		opts = append(opts, c.tel.option())
	}
	era, err := negotiate.ParseEraPolicy(c.f.era)
	if err != nil {
		return nil, nil, usageErr("--era: %v", err)
	}
	opts = append(opts, client.WithEra(era), client.WithCache(negotiate.NewCache(0)))
	if c.f.protocol != "" {
		opts = append(opts, client.WithProtocolVersion(c.f.protocol))
	}
	var secrets []string
	var ct client.Target
	if t.isCommand() {
		cmd := *t.cmd
		cmd.Logger = c.log
		cmd.Stderr = c.stderr // the server's stderr is ours: stdout is the downstream's, when stdio
		ct = client.Process(cmd)
	} else {
		ct = client.URL(t.url)
		for _, h := range t.header {
			opts = append(opts, client.WithHeader(h[0], h[1]))
			secrets = append(secrets, h[1])
		}
		opts = append(opts, client.WithTransportPolicy(t.policy))
		if !hasAuthorization(t) {
			cfg, err := c.authConfig(t)
			if err != nil {
				return nil, nil, err
			}
			a, err := newAuthorizer(cfg)
			if err != nil {
				return nil, nil, err
			}
			opts = append(opts, client.WithAuth(a))
		}
	}
	return bridge.DialTarget(ct, opts...), secrets, nil
}

// readSecret returns the trimmed contents of file, else of the
// environment variable env, else "".
func (c *cli) readSecret(file, env string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", usageErr("reading %s: %v", file, err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	if v, ok := c.lookupEnv(env); ok {
		return strings.TrimSpace(v), nil
	}
	return "", nil
}

func (c *cli) runBridge(ctx context.Context, bf *bridgeFlags, t *target) error {
	o, err := c.bridgeOptions(bf)
	if err != nil {
		return err
	}
	if err := c.checkBridgeListen(bf, o.AuthToken != ""); err != nil {
		return err
	}
	dial, secrets, err := c.bridgeDialer(t)
	if err != nil {
		return err
	}
	o.Secrets = secrets
	dctx, cancel := context.WithCancel(ctx)
	if c.f.connectTimeout > 0 {
		dctx, cancel = context.WithTimeoutCause(ctx, c.f.connectTimeout, errConnectTimeout)
	}
	b, err := bridge.New(dctx, dial, o)
	cancel()
	if err != nil {
		return &connectError{fmt.Errorf("connecting to %s: %w", t.display, err)}
	}
	defer b.Close()
	info := b.Info()
	c.log.Info("bridging", "target", t.display, "transport", info.Transport, "protocolVersion", info.ProtocolVersion)
	return c.serveBridge(ctx, bf.listen, func(ctx context.Context) error {
		return b.ServeStdio(ctx, c.stdin, c.stdout)
	}, b.Handler(), b.Close)
}

// bridgeOptions reads the secrets of both forms of bridge (the bearer
// token, the state key) and makes the downstream faces' Options.
func (c *cli) bridgeOptions(bf *bridgeFlags) (bridge.Options, error) {
	token, err := c.readSecret(bf.authTokenFile, envBridgeToken)
	if err != nil {
		return bridge.Options{}, err
	}
	key, err := c.readSecret(bf.stateKeyFile, envBridgeStateKey)
	if err != nil {
		return bridge.Options{}, err
	}
	stateKey, err := bridge.ParseKey(key)
	if err != nil {
		return bridge.Options{}, usageErr("state key: %v", err)
	}
	if token != "" {
		c.sec.add(token)
	}
	o := bridge.Options{
		StateKey: stateKey, ReplicaID: bf.replicaID, AuthToken: token,
		AllowedOrigins: bf.origins, AllowedHosts: bf.hosts,
		Redact: c.sec.scrub, Logger: c.log,
	}
	if c.tel != nil {
		// OTEL_* set: each downstream request is a SERVER span, parent of
		// its upstream CLIENT span (docs/observability.md).
		o.Observer = c.tel.observer.Server()
	}
	return o, nil
}

// checkBridgeListen applies checkListen to --listen, when given.
func (c *cli) checkBridgeListen(bf *bridgeFlags, haveToken bool) error {
	if bf.listen == "" {
		return nil
	}
	return checkListen(bf.listen, bf.allowRemote, haveToken)
}

// serveBridge serves stdio when addr is "", else handler over HTTP at
// addr until ctx is done; closeAll then ends the long-lived streams.
// Both forms of bridge (one target, --all) end here.
func (c *cli) serveBridge(ctx context.Context, addr string, stdio func(context.Context) error, handler http.Handler, closeAll func() error) error {
	if addr == "" {
		return stdio(ctx)
	}
	return c.serveBridgeHTTP(ctx, handler, closeAll, addr)
}

// checkListen refuses a non-loopback address without --allow-remote and a
// token.
func checkListen(addr string, allowRemote, haveToken bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageErr("--listen %s: %v", addr, err)
	}
	ip := net.ParseIP(host)
	loopback := host == "localhost" || (ip != nil && ip.IsLoopback())
	switch {
	case loopback:
		return nil
	case !allowRemote:
		return usageErr("--listen %s is not a loopback address: give --allow-remote too, with --auth-token-file", addr)
	case !haveToken:
		return usageErr("--listen %s with --allow-remote: clients must authenticate; give --auth-token-file FILE or set $%s", addr, envBridgeToken)
	}
	return nil
}

func (c *cli) serveBridgeHTTP(ctx context.Context, handler http.Handler, closeAll func() error, addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return usageErr("--listen: %v", err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(c.log.Handler(), slog.LevelDebug)}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	fmt.Fprintf(c.stderr, "listening on http://%s/mcp\n", l.Addr())
	select {
	case err = <-done:
	case <-ctx.Done():
		closeAll() //nolint:errcheck // ends the long-lived streams, so that Shutdown can finish; closed again by the caller
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err = srv.Shutdown(sctx); errors.Is(err, context.DeadlineExceeded) {
			err = srv.Close()
		}
		<-done
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

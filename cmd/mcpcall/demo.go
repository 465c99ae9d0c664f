package main

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/testservers"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

func (c *cli) demoCommand() *cobra.Command {
	var serve string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Start the built-in test servers and show the library working against each",
		Long: `demo starts, inside this process, servers of every era and kind the library
speaks to: a 2026-07-28 (stateless) server over Streamable HTTP and over
stdio, a dual-era server, 2025-11-25 Streamable HTTP answering with SSE and with
JSON, a 2024-11-05 HTTP+SSE server (found by the fallback after its POST is
refused), a hybrid server hosting both initialize-era transports (once at its Streamable
HTTP path, once forced onto HTTP+SSE), and an initialize-era stdio server (this binary
started again as a child). It connects to each, prints how the era and the
transport were negotiated, lists the tools and calls two of them, one with
progress. A server that wants OAuth tokens (with its own authorization server,
whose "user" approves at once: discovery, registration, PKCE, token) shows the
authorization. No outside server is needed.

With --serve ADDR it instead keeps the Streamable HTTP test server running at
http://ADDR/mcp until interrupted, for trying mcpcall by hand.`,
		Example: `  mcpcall demo
  mcpcall demo --serve 127.0.0.1:8080 &
  mcpcall tools call add a=2 b=3 http://127.0.0.1:8080/mcp`,
		Args: cobra.NoArgs,
		RunE: c.runE(func(cmd *cobra.Command, _ []string) error {
			if serve != "" {
				return c.serveDemo(cmd.Context(), serve)
			}
			statelessSrv := testservers.StartStateless(testservers.HTTPOptions{})
			defer statelessSrv.Close()
			dualSrv := testservers.StartDualEra(testservers.HTTPOptions{})
			defer dualSrv.Close()
			sseSrv := testservers.StartStreamable(testservers.HTTPOptions{Priming: true})
			defer sseSrv.Close()
			jsonSrv := testservers.StartStreamable(testservers.HTTPOptions{JSONResponse: true})
			defer jsonSrv.Close()
			legacySrv := testservers.StartLegacy(testservers.LegacyOptions{})
			defer legacySrv.Close()
			hybrid := testservers.StartHybrid(testservers.HybridOptions{})
			defer hybrid.Close()
			authSrv := oauthserver.StartAuthServer(oauthserver.AuthServerOptions{ScopesSupported: []string{"mcp", "offline_access"}})
			defer authSrv.Close()
			protected := oauthserver.StartProtected(oauthserver.ProtectedOptions{AuthServer: authSrv, Scopes: []string{"mcp"}, ScopeInChallenge: true})
			defer protected.Close()
			self, err := os.Executable()
			if err != nil {
				return fmt.Errorf("demo: finding this program to start it as a stdio server: %w", err)
			}
			targets := []struct {
				label  string
				target client.Target
				policy negotiate.TransportPolicy
				auth   *auth.Authorizer
			}{
				{"2026-07-28 server (stateless), Streamable HTTP", client.URL(statelessSrv.URL), negotiate.TransportAuto, nil},
				{"2026-07-28 server (stateless), stdio child process", client.Command(self, demoServerArgs("stateless")...), negotiate.TransportAuto, nil},
				{"dual-era server (2026-07-28 and 2025-11-25), Streamable HTTP", client.URL(dualSrv.URL), negotiate.TransportAuto, nil},
				{"2025-11-25 server, Streamable HTTP, SSE answers", client.URL(sseSrv.URL), negotiate.TransportAuto, nil},
				{"2025-11-25 server, Streamable HTTP, JSON answers", client.URL(jsonSrv.URL), negotiate.TransportAuto, nil},
				{"2024-11-05 HTTP+SSE server, found by fallback", client.URL(legacySrv.URL), negotiate.TransportAuto, nil},
				{"hybrid server, Streamable HTTP path", client.URL(hybrid.URL), negotiate.TransportAuto, nil},
				{"hybrid server, HTTP+SSE path (--transport sse)", client.URL(hybrid.SSEURL), negotiate.SSEOnly, nil},
				{"OAuth-protected 2025-11-25 server (401, then authorized)", client.URL(protected.URL), negotiate.TransportAuto, c.demoAuthorizer(authSrv)},
				{"2025-11-25 server, stdio child process", client.Command(self, demoServerArgs("initialize")...), negotiate.TransportAuto, nil},
			}
			for _, tg := range targets {
				if err := c.demoOne(cmd.Context(), c.stdout, tg.label, tg.target, tg.policy, tg.auth); err != nil {
					return fmt.Errorf("%s: %w", tg.label, err)
				}
			}
			fmt.Fprintln(c.stdout, "all servers answered.")
			return nil
		}),
	}
	cmd.Flags().StringVar(&serve, "serve", "", "keep the Streamable HTTP test server running at this `ADDR` (host:port) instead")
	c.addFlags(cmd, "connect-timeout", "max-time")
	cmd.AddCommand(c.demoStdioServerCommand())
	return cmd
}

// demoAuthorizer authorizes the demo's protected server: a memory store,
// and a "user" who approves at once (no browser).
func (c *cli) demoAuthorizer(as *oauthserver.AuthServer) *auth.Authorizer {
	a, err := auth.New(auth.Config{
		ClientName:  "mcpcall-demo",
		RedirectURL: "http://127.0.0.1:9/callback", // the headless user reads the redirect instead of following it
		Authorize: func(ctx context.Context, authURL string) (string, error) {
			u, _ := url.Parse(authURL)
			fmt.Fprintf(c.stdout, "   authorization requested at %s://%s%s (scope %q, PKCE %s); the demo's user approves\n",
				u.Scheme, u.Host, u.Path, u.Query().Get("scope"), u.Query().Get("code_challenge_method"))
			return as.Approve(ctx, authURL)
		},
		Logger: c.log,
	})
	if err != nil {
		panic(err) // a constant configuration
	}
	return a
}

func (c *cli) demoOne(ctx context.Context, w io.Writer, label string, target client.Target, policy negotiate.TransportPolicy, a *auth.Authorizer) error {
	// A progress notification may trail its call's answer (a JSON answer,
	// progress on the GET stream) and print while the next line does.
	out := &lockedWriter{w: w}
	if strings.HasPrefix(target.String(), "http") {
		fmt.Fprintf(out, "== %s: %s\n", label, target)
	} else {
		fmt.Fprintf(out, "== %s\n", label) // the test binary's path says nothing
	}
	start := time.Now()
	dctx, cancel := context.WithTimeoutCause(ctx, c.f.connectTimeout, errConnectTimeout)
	defer cancel()
	opts := []client.Option{
		client.WithClientInfo("mcpcall-demo", moduleVersion()),
		client.WithLogger(c.log),
		client.WithTransportPolicy(policy),
	}
	if a != nil {
		opts = append(opts, client.WithAuth(a))
	}
	conn, err := client.Dial(dctx, target, opts...)
	if err != nil {
		return &connectError{err}
	}
	defer conn.Close()
	if a != nil {
		if entries, err := a.Tokens(ctx, ""); err == nil && len(entries) == 1 {
			fmt.Fprintf(out, "   authorized by %s: %s\n", entries[0].Key.Issuer, describeToken(entries[0].Token))
		}
	}
	info := conn.Info()
	if info.Negotiation != nil {
		for _, line := range strings.Split(strings.TrimRight(info.Negotiation.String(), "\n"), "\n") {
			fmt.Fprintln(out, "   "+line)
		}
	}
	fmt.Fprintf(out, "   connected in %v: %s era, transport %s, protocol %s, server %s %s\n",
		time.Since(start).Round(time.Millisecond), info.Era, info.Transport, info.ProtocolVersion, info.ServerInfo.Name, info.ServerInfo.Version)
	tools, err := conn.AllTools(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "   %d tools:", len(tools))
	for _, t := range tools {
		fmt.Fprint(out, " ", t.Name)
	}
	fmt.Fprintln(out)
	res, err := conn.CallTool(ctx, "add", map[string]int{"a": 20, "b": 22})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "   add(20, 22) → %s  structured: %s\n", res.Content[0].Text, res.StructuredContent)
	res, err = conn.CallTool(ctx, "slow", map[string]int{"steps": 3, "delayMs": 50},
		client.WithProgress(func(p mcp.ProgressParams) {
			fmt.Fprintf(out, "   progress %v/%v %s\n", p.Progress, p.Total, p.Message)
		}))
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "   slow → %s\n", res.Content[0].Text)
	return nil
}

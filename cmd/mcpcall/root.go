package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"time"

	"github.com/spf13/cobra"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/jsonrpc"
)

// Exit codes.
const (
	exitOK        = 0
	exitToolError = 1 // the tool answered isError: true
	exitUsage     = 2
	exitAuth      = 3 // 401/403
	exitConnect   = 4 // connection, transport or negotiation failure
	exitRPC       = 5 // JSON-RPC error from the server
	exitTimeout   = 6
	exitInterrupt = 130
)

// exitError carries an exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

type globalFlags struct {
	json           bool
	verbose        bool
	connectTimeout time.Duration
	timeout        time.Duration
}

func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	g := &globalFlags{}
	root := &cobra.Command{
		Use:           "mcpcall",
		Short:         "Call any MCP server from the shell",
		Long:          "mcpcall connects to an MCP server — an http(s) URL (Streamable HTTP) or a local command after `--` (stdio) — and runs one command against it. The target always comes last.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().BoolVar(&g.json, "json", false, "print one JSON document on stdout")
	root.PersistentFlags().BoolVarP(&g.verbose, "verbose", "v", false, "log connection details to stderr")
	root.PersistentFlags().DurationVar(&g.connectTimeout, "connect-timeout", 30*time.Second, "bound on connecting and the handshake")
	root.PersistentFlags().DurationVar(&g.timeout, "timeout", client.DefaultRequestTimeout, "per-request timeout, restarted by progress")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetArgs(args)
	root.AddCommand(toolsCommand(g), demoCommand(g))
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &exitError{exitUsage, err} })

	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	code := exitCode(ctx, err)
	if code != exitToolError {
		fmt.Fprintln(stderr, "mcpcall:", err)
	}
	return code
}

func exitCode(ctx context.Context, err error) int {
	var ee *exitError
	var httpErr *jsonrpc.HTTPError
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &ee):
		return ee.code
	case ctx.Err() != nil:
		return exitInterrupt
	case errors.Is(err, client.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		return exitTimeout
	case errors.As(err, &httpErr) && (httpErr.StatusCode == 401 || httpErr.StatusCode == 403):
		return exitAuth
	case errors.As(err, &httpErr):
		return exitConnect
	case errors.As(err, &rpcErr):
		return exitRPC
	}
	return exitConnect
}

func (g *globalFlags) logger(stderr io.Writer) *slog.Logger {
	if !g.verbose {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// dial connects to the target named by the trailing arguments.
func (g *globalFlags) dial(cmd *cobra.Command, target client.Target) (*client.Conn, error) {
	ctx, cancel := context.WithTimeout(cmd.Context(), g.connectTimeout)
	defer cancel()
	conn, err := client.Dial(ctx, target,
		client.WithLogger(g.logger(cmd.ErrOrStderr())),
		client.WithRequestTimeout(g.timeout),
		client.WithClientInfo("mcpcall", client.Version))
	if err != nil {
		return nil, err
	}
	if g.verbose {
		info := conn.Info()
		fmt.Fprintf(cmd.ErrOrStderr(), "connected: transport=%s protocol=%s server=%s %s\n",
			info.Transport, info.ProtocolVersion, info.ServerInfo.Name, info.ServerInfo.Version)
	}
	return conn, nil
}

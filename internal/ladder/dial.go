package ladder

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/anymcp/anymcp/internal/origin"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/stdio"
)

// Target is what Dial connects to: an http(s) URL, or a command to start
// and speak to over its stdin and stdout. Exactly one is set.
type Target struct {
	URL     string
	Command *stdio.Command
}

// errNoTarget is what Dial returns for an empty Target: client.Dial
// refuses one first, with client.ErrNoTarget.
var errNoTarget = errors.New("no target: give a URL or a command")

// Dial connects to target and runs the ladder there. For a URL it is
// Connect. For a command it starts the process (stdio.Start; a nil
// Command.Logger gets cfg.Logger) and runs Handshake over it, under the
// cache key and label of its command line; a process that refused
// initialize after the stateless probe is stopped and started again by Dial
// itself (cfg.Restart is not used). On success the caller owns the
// Result's Transport; on failure no process is left running.
func Dial(ctx context.Context, target Target, hello Hello, cfg Config) (*Result, error) {
	switch {
	case target.Command != nil && target.URL != "":
		return nil, errors.New("a target is a URL or a command, not both")
	case target.Command != nil:
		return dialCommand(ctx, *target.Command, hello, cfg)
	case target.URL != "":
		u, err := url.Parse(target.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%q is not an http(s) URL", origin.RedactString(target.URL))
		}
		return Connect(ctx, target.URL, hello, cfg)
	}
	return nil, errNoTarget
}

// dialCommand starts cmd and finds the era of the server it runs.
func dialCommand(ctx context.Context, cmd stdio.Command, hello Hello, cfg Config) (*Result, error) {
	if cmd.Logger == nil {
		cmd.Logger = cfg.Logger
	}
	l, err := newLadder(negotiate.CommandKey(cmd), hello, cfg)
	if err != nil {
		return nil, err
	}
	l.report.URL = "stdio:" + strings.Join(append([]string{filepath.Base(cmd.Path)}, cmd.Args...), " ")
	t, err := stdio.Start(cmd)
	if err != nil {
		return nil, err
	}
	h := &handshake{ladder: l, t: t, name: negotiate.Stdio, p: newPump(t, l.cfg.Logger)}
	h.restartServer = func(ctx context.Context) (jsonrpc.Transport, error) {
		// The old process is stopped before the new one starts: never
		// two at once.
		if err := jsonrpc.Shutdown(ctx, h.t); err != nil {
			l.cfg.Logger.Debug("the stdio server stopped to be started again ended so", "err", err)
		}
		return stdio.Start(cmd)
	}
	res, err := h.run(ctx)
	if err != nil {
		// h.t is the process last started: the first, or the one a
		// restart started.
		jsonrpc.Shutdown(ctx, h.t) //nolint:errcheck // the handshake's error is the one to report; bounded by ctx
		<-h.p.done                 // the pump's reader ends with the transport
		return nil, err
	}
	return res, nil
}

package client

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/modern"
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

// String returns the URL, or the command line.
func (t Target) String() string {
	if t.cmd != nil {
		return fmt.Sprint(append([]string{t.cmd.Path}, t.cmd.Args...))
	}
	return t.url
}

// Transport names reported by Info.
const (
	TransportStreamableHTTP = "streamable-http"
	TransportSSE            = "sse"
	TransportStdio          = "stdio"
)

// ErrNoTarget is returned by Dial for an empty Target.
var ErrNoTarget = errors.New("anymcp: no target: give client.URL or client.Command")

// Dial connects to target and runs the MCP handshake. ctx bounds the
// connecting and the handshake; the Conn lives until Close.
func Dial(ctx context.Context, target Target, opts ...Option) (*Conn, error) {
	o := newOptions(opts)
	var t jsonrpc.Transport
	switch {
	case target.cmd != nil:
		cmd := *target.cmd
		if cmd.Logger == nil {
			cmd.Logger = o.logger
		}
		st, err := stdio.Start(cmd)
		if err != nil {
			return nil, err
		}
		t, o.transportName = st, TransportStdio
	case target.url != "":
		u, err := url.Parse(target.url)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("anymcp: %q is not an http(s) URL", target.url)
		}
		mt, err := modern.New(target.url, modern.Options{HTTPClient: o.httpClient, Header: o.header, Logger: o.logger})
		if err != nil {
			return nil, err
		}
		t, o.transportName = mt, TransportStreamableHTTP
	default:
		return nil, ErrNoTarget
	}
	return open(ctx, t, o)
}

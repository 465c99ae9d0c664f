package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"github.com/anymcp/anymcp/jsonrpc"
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
	TransportStdio          = "stdio"
)

// ErrNoTarget is returned by Dial for an empty Target.
var ErrNoTarget = errors.New("anymcp: no target: give client.URL or client.Command")

// Dial connects to target and runs the MCP handshake. ctx bounds the
// connecting and the handshake (when ctx has no deadline, the request
// timeout does); the Conn lives until Close.
func Dial(ctx context.Context, target Target, opts ...Option) (*Conn, error) {
	o := newOptions(opts)
	if _, ok := ctx.Deadline(); !ok && o.requestTimeout > 0 {
		// Without a deadline of the caller's, the handshake is bounded
		// as any request is.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.requestTimeout)
		defer cancel()
	}
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
		return dialHTTP(ctx, target.url, o)
	default:
		return nil, ErrNoTarget
	}
	return open(ctx, t, o)
}

// dialHTTP runs the transport ladder for an http(s) URL, then finishes the
// handshake on whichever transport answered initialize.
func dialHTTP(ctx context.Context, rawURL string, o *options) (*Conn, error) {
	params := initializeParams(o)
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("initialize: encoding params: %w", err)
	}
	init := &jsonrpc.Message{ID: jsonrpc.Int(initializeID), Method: "initialize", Params: raw}
	if o.hook != nil {
		o.hook(true, init)
	}
	res, err := negotiate.Connect(ctx, rawURL, init, negotiate.Config{
		HTTPClient: o.httpClient,
		Header:     o.header,
		Logger:     o.logger,
		Policy:     o.policy,
		Cache:      o.cache,
		Reconnect:  o.reconnect,
	})
	if err != nil {
		return nil, err
	}
	if o.hook != nil {
		o.hook(false, res.Response)
	}
	o.transportName = res.Name
	c := newConn(res.Transport, o)
	c.nextID.Store(initializeID)
	c.droppedNotifications.Add(int64(res.DroppedNotifications)) // negotiate logged them
	c.mu.Lock()
	c.info.Negotiation = res.Report
	c.mu.Unlock()
	if res.Response.Error != nil {
		c.Close()
		return nil, fmt.Errorf("initialize: %w", res.Response.Error)
	}
	if err := c.finishInitialize(ctx, params.ProtocolVersion, res.Response.Result); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// initializeID is the id of the initialize request the ladder sends; the
// Conn's own ids start after it.
const initializeID = 1

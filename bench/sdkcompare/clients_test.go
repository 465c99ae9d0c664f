package sdkcompare_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	gosdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/negotiate"
)

// server is where a client connects: a URL (HTTP) or a command (stdio).
type server struct {
	// transport is "http-json" or "http-sse" (Streamable HTTP answering
	// with JSON or SSE, revision 2025-11-25), "legacy-sse" (HTTP+SSE,
	// 2024-11-05), "modern" (Streamable HTTP, 2026-07-28 only) or "stdio".
	transport string
	url       string
	path      string
	args      []string
	env       []string // added to the environment of the child
	// ownHTTP dials anymcp without an HTTP client of the host's, so that it
	// uses the one it makes by default (its shared pool, sized for busy
	// Conns); the others and the floor always get a fresh clone of
	// http.DefaultTransport, which is what they use by default.
	ownHTTP bool
	// listen dials every client holding the server's standalone GET
	// stream open, as a host that listens for server notifications does:
	// anymcp with a notification handler, mcp-go with continuous
	// listening, the floor with a GET of its own (go-sdk always opens it).
	listen bool
}

func (s *server) isHTTP() bool { return s.url != "" }

// conn is one connected client, whichever library it comes from.
type conn interface {
	// callTool calls a tool and returns the text of the first content
	// item. The floor decodes nothing and returns "".
	callTool(ctx context.Context, name string, args map[string]any) (string, error)
	// listTools returns the number of tools on the first page.
	listTools(ctx context.Context) (int, error)
	close() error
}

// contender is a client under comparison.
type contender struct {
	name string
	dial func(ctx context.Context, s *server) (conn, error)
	// only names the one benchmark a variant runs in ("BigResult",
	// "Connect"), and stdioOnly marks one run over stdio only.
	only      string
	stdioOnly bool
	// warm marks a variant whose connects share a negotiation cache: only
	// the first connect to a server is cold.
	warm bool
}

var contenders = []contender{
	{name: "floor", dial: dialFloor},
	{name: "anymcp", dial: dialAnymcp},
	{name: "gosdk", dial: dialGoSDK},
	{name: "mcpgo", dial: dialMCPGo},
	{name: "gosdk-nocap", dial: dialGoSDKNoCap, only: "BigResult", stdioOnly: true},
	{name: "anymcp-warm", dial: dialAnymcpWarm, only: "Connect", warm: true},
}

// variant reports whether c is a variant of a client, run in one
// benchmark only.
func (c contender) variant() bool { return c.only != "" }

// newHTTPClient returns a client with a transport of its own: no client
// reuses the connections of another, or of an earlier connect.
func newHTTPClient() *http.Client {
	return &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
}

// childEnv is the environment the go-sdk, mcp-go and floor children get:
// this process's and the server's variables. (anymcp passes a small
// allowlist plus the server's variables; the child reads only those.)
func childEnv(s *server) []string { return append(os.Environ(), s.env...) }

// lifetime returns the context to connect with when the connection keeps
// it: go-sdk's SSEClientTransport and mcp-go's SSE client tie their GET
// stream (and so the whole connection) to the context they connect with,
// so a dial's deadline would end the connection once the dial returns.
// life ends with end, or with dialCtx until keep is called once the dial
// is done; keep reports false when dialCtx ended first.
func lifetime(dialCtx context.Context) (life context.Context, end context.CancelFunc, keep func() bool) {
	life, end = context.WithCancel(context.WithoutCancel(dialCtx))
	return life, end, context.AfterFunc(dialCtx, end)
}

// errDialEnded: the dial's context ended as the dial was done.
var errDialEnded = errors.New("the dial's context ended")

// errorResult reports a tool result with isError set.
func errorResult(text string) error { return fmt.Errorf("tool error: %s", text) }

// ---- anymcp ----

type anymcpConn struct {
	c  *client.Conn
	hc *http.Client
}

// warmCache is the negotiation cache of anymcp-warm: the outcome of the
// first Dial to each server (its URL, or its command line) spares the
// next ones the era probe.
var warmCache = negotiate.NewCache(0)

// dialAnymcpWarm dials as dialAnymcp does, with warmCache.
func dialAnymcpWarm(ctx context.Context, s *server) (conn, error) {
	return dialAnymcpWith(ctx, s, client.WithCache(warmCache))
}

func dialAnymcp(ctx context.Context, s *server) (conn, error) {
	if s.listen {
		return dialAnymcpWith(ctx, s, client.OnNotification(func(string, []byte) {}))
	}
	return dialAnymcpWith(ctx, s)
}

func dialAnymcpWith(ctx context.Context, s *server, opts ...client.Option) (conn, error) {
	if s.isHTTP() && s.ownHTTP {
		c, err := client.Dial(ctx, client.URL(s.url), opts...)
		if err != nil {
			return nil, err
		}
		return &anymcpConn{c: c}, nil
	}
	if s.isHTTP() {
		hc := newHTTPClient()
		c, err := client.Dial(ctx, client.URL(s.url), append(opts, client.WithHTTPClient(hc))...)
		if err != nil {
			hc.CloseIdleConnections()
			return nil, err
		}
		return &anymcpConn{c: c, hc: hc}, nil
	}
	c, err := client.Dial(ctx, client.Command(s.path, s.args...).WithEnv(s.env...), opts...)
	if err != nil {
		return nil, err
	}
	return &anymcpConn{c: c}, nil
}

func (a *anymcpConn) callTool(ctx context.Context, name string, args map[string]any) (string, error) {
	res, err := a.c.CallTool(ctx, name, args)
	if err != nil {
		return "", err
	}
	if len(res.Content) == 0 {
		return "", errors.New("no content")
	}
	if res.IsError {
		return "", errorResult(res.Content[0].Text)
	}
	return res.Content[0].Text, nil
}

func (a *anymcpConn) listTools(ctx context.Context) (int, error) {
	res, err := a.c.ListTools(ctx, "")
	if err != nil {
		return 0, err
	}
	return len(res.Tools), nil
}

func (a *anymcpConn) close() error {
	err := a.c.Close()
	if a.hc != nil {
		a.hc.CloseIdleConnections()
	}
	return err
}

// ---- go-sdk ----

type gosdkConn struct {
	cs  *gosdk.ClientSession
	hc  *http.Client
	cmd *exec.Cmd          // set when this code started the child itself (nocap)
	end context.CancelFunc // ends the context of an SSE connection (see lifetime)
}

func dialGoSDK(ctx context.Context, s *server) (conn, error) { return dialGoSDKWith(ctx, s, false) }

// dialGoSDKNoCap lifts go-sdk's 16 MiB stdio line limit: its
// CommandTransport has no knob for it, so this starts the child itself and
// speaks to it through an IOTransport with MaxLineLength -1. Over HTTP it
// also sets MaxEventSize -1, though go-sdk v1.8.0's Streamable client does
// not apply its documented 16 MiB default anyway (0 passes through as "no
// cap"), so that variant runs over stdio only.
func dialGoSDKNoCap(ctx context.Context, s *server) (conn, error) {
	return dialGoSDKWith(ctx, s, true)
}

func dialGoSDKWith(ctx context.Context, s *server, nocap bool) (_ conn, err error) {
	cl := gosdk.NewClient(&gosdk.Implementation{Name: "sdkcompare", Version: "v0"}, nil)
	g := &gosdkConn{}
	var t gosdk.Transport
	switch {
	case s.transport == "legacy-sse":
		g.hc = newHTTPClient()
		t = &gosdk.SSEClientTransport{Endpoint: s.url, HTTPClient: g.hc}
		var keep func() bool
		ctx, g.end, keep = lifetime(ctx)
		defer func() {
			if !keep() && err == nil {
				err = errDialEnded
			}
		}()
	case s.isHTTP():
		g.hc = newHTTPClient()
		st := &gosdk.StreamableClientTransport{Endpoint: s.url, HTTPClient: g.hc}
		if nocap {
			st.MaxEventSize = -1
		}
		t = st
	case nocap:
		cmd := exec.Command(s.path, s.args...)
		cmd.Env = childEnv(s)
		in, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		g.cmd = cmd
		t = &gosdk.IOTransport{Reader: out, Writer: in, MaxLineLength: -1}
	default:
		cmd := exec.Command(s.path, s.args...)
		cmd.Env = childEnv(s)
		t = &gosdk.CommandTransport{Command: cmd}
	}
	g.cs, err = cl.Connect(ctx, t, nil)
	if err != nil {
		g.release()
		return nil, err
	}
	return g, nil
}

func (g *gosdkConn) callTool(ctx context.Context, name string, args map[string]any) (string, error) {
	res, err := g.cs.CallTool(ctx, &gosdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", err
	}
	if len(res.Content) == 0 {
		return "", errors.New("no content")
	}
	tc, ok := res.Content[0].(*gosdk.TextContent)
	if !ok {
		return "", fmt.Errorf("content is %T, not text", res.Content[0])
	}
	if res.IsError {
		return "", errorResult(tc.Text)
	}
	return tc.Text, nil
}

func (g *gosdkConn) listTools(ctx context.Context) (int, error) {
	res, err := g.cs.ListTools(ctx, nil)
	if err != nil {
		return 0, err
	}
	return len(res.Tools), nil
}

func (g *gosdkConn) close() error {
	err := g.cs.Close()
	g.release()
	return err
}

// release frees what dial set up besides the session.
func (g *gosdkConn) release() {
	if g.end != nil {
		g.end()
	}
	if g.hc != nil {
		g.hc.CloseIdleConnections()
	}
	if g.cmd != nil {
		// The session closed the pipes; the child sees EOF and exits.
		_ = g.cmd.Wait()
	}
}

// ---- mcp-go ----

type mcpgoConn struct {
	c   *mcpgoclient.Client
	hc  *http.Client
	end context.CancelFunc // ends the context of an SSE connection (see lifetime)
}

func dialMCPGo(ctx context.Context, s *server) (_ conn, err error) {
	m := &mcpgoConn{}
	if s.transport == "legacy-sse" || s.listen {
		// Its SSE client's stream, and the listener of its Streamable
		// HTTP client, live as long as the context Start was given.
		var keep func() bool
		ctx, m.end, keep = lifetime(ctx)
		defer func() {
			if !keep() && err == nil {
				_ = m.close()
				err = errDialEnded
			}
		}()
	}
	switch {
	case s.transport == "legacy-sse":
		m.hc = newHTTPClient()
		m.c, err = mcpgoclient.NewSSEMCPClient(s.url, mcpgoclient.WithHTTPClient(m.hc))
	case s.isHTTP():
		m.hc = newHTTPClient()
		opts := []mcpgotransport.StreamableHTTPCOption{mcpgotransport.WithHTTPBasicClient(m.hc)}
		if s.listen {
			opts = append(opts, mcpgotransport.WithContinuousListening())
		}
		m.c, err = mcpgoclient.NewStreamableHttpClient(s.url, opts...)
	default:
		// Starts the child at once.
		m.c, err = mcpgoclient.NewStdioMCPClient(s.path, s.env, s.args...)
	}
	if err != nil {
		m.release()
		return nil, err
	}
	if err := m.c.Start(ctx); err != nil {
		_ = m.close()
		return nil, err
	}
	req := mcpgo.InitializeRequest{}
	req.Params.ProtocolVersion = mcpgo.LATEST_PROTOCOL_VERSION
	req.Params.ClientInfo = mcpgo.Implementation{Name: "sdkcompare", Version: "v0"}
	if _, err := m.c.Initialize(ctx, req); err != nil {
		_ = m.close()
		return nil, err
	}
	return m, nil
}

func (m *mcpgoConn) callTool(ctx context.Context, name string, args map[string]any) (string, error) {
	req := mcpgo.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := m.c.CallTool(ctx, req)
	if err != nil {
		return "", err
	}
	if len(res.Content) == 0 {
		return "", errors.New("no content")
	}
	tc, ok := mcpgo.AsTextContent(res.Content[0])
	if !ok {
		return "", fmt.Errorf("content is %T, not text", res.Content[0])
	}
	if res.IsError {
		return "", errorResult(tc.Text)
	}
	return tc.Text, nil
}

func (m *mcpgoConn) listTools(ctx context.Context) (int, error) {
	res, err := m.c.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil {
		return 0, err
	}
	return len(res.Tools), nil
}

func (m *mcpgoConn) close() error {
	var err error
	if m.c != nil {
		err = m.c.Close()
	}
	m.release()
	return err
}

func (m *mcpgoConn) release() {
	if m.end != nil {
		m.end()
	}
	if m.hc != nil {
		m.hc.CloseIdleConnections()
	}
}

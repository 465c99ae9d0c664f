package sdkcompare_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
)

// The floor is the least a client can do for the same exchange: it sends
// request bytes encoded once and reads the whole answer into a reused
// buffer, without decoding it. It speaks the protocol just enough to be
// served: initialize, notifications/initialized, and the session header
// over HTTP.

// floorVersion is the protocol revision the floor asks for on Streamable
// HTTP and stdio; floorSSEVersion on HTTP+SSE, floorStatelessVersion on a
// 2026-07-28 server.
const (
	floorVersion          = "2025-11-25"
	floorSSEVersion       = "2024-11-05"
	floorStatelessVersion = "2026-07-28"
)

// floorStatelessMeta is the _meta of every 2026-07-28 request of the floor.
var floorStatelessMeta = map[string]any{
	"io.modelcontextprotocol/protocolVersion":    floorStatelessVersion,
	"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "floor", "version": "v0"},
	"io.modelcontextprotocol/clientCapabilities": map[string]any{},
}

const (
	floorInitialize  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + floorVersion + `","capabilities":{},"clientInfo":{"name":"floor","version":"v0"}}}`
	floorInitialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	floorListTools   = `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`
)

// rawBody is implemented by the floors: the bytes of the last answer.
type rawBody interface{ last() []byte }

func dialFloor(ctx context.Context, s *server) (conn, error) {
	switch s.transport {
	case "legacy-sse":
		return dialSSEFloor(ctx, s)
	case "modern":
		return dialStatelessFloor(ctx, s)
	case "stdio":
		return dialStdioFloor(s)
	}
	return dialHTTPFloor(ctx, s)
}

// callCache holds the encoded tools/call request of each tool name; a
// benchmark calls one tool with the same arguments, so each is encoded
// once. It is not safe for concurrent use: a concurrent benchmark encodes
// its request before it starts its callers.
type callCache map[string][]byte

func (c callCache) request(name string, args map[string]any, newline bool) ([]byte, error) {
	return c.encode(name, args, nil, newline)
}

// encode is request with meta as the params' _meta when not nil.
func (c callCache) encode(name string, args, meta map[string]any, newline bool) ([]byte, error) {
	if b, ok := c[name]; ok {
		return b, nil
	}
	type params struct {
		Meta      map[string]any `json:"_meta,omitempty"`
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	b, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int    `json:"id"`
		Method  string `json:"method"`
		Params  params `json:"params"`
	}{"2.0", 2, "tools/call", params{meta, name, args}})
	if err != nil {
		return nil, err
	}
	if newline {
		b = append(b, '\n')
	}
	c[name] = b
	return b, nil
}

// ---- HTTP ----

type httpFloor struct {
	hc   *http.Client
	url  string
	hdr  http.Header // the headers of every POST; shared, never changed
	body bytes.Buffer
	reqs callCache
	// modern: the requests carry _meta, and each tools/call the headers
	// of callHdr (Mcp-Method and Mcp-Name besides hdr's); no session.
	modern  bool
	callHdr map[string]http.Header
	// stream is the standalone GET stream a listening floor holds open,
	// unread; endStream ends it.
	stream    *http.Response
	endStream context.CancelFunc
}

func newHTTPFloor(s *server, hc *http.Client) *httpFloor {
	return &httpFloor{
		hc:   hc,
		url:  s.url,
		reqs: callCache{},
		hdr: http.Header{
			"Content-Type": {"application/json"},
			"Accept":       {"application/json, text/event-stream"},
		},
	}
}

func dialHTTPFloor(ctx context.Context, s *server) (*httpFloor, error) {
	return dialHTTPFloorWith(ctx, s, newHTTPClient())
}

// dialHTTPFloorWith is dialHTTPFloor over hc.
func dialHTTPFloorWith(ctx context.Context, s *server, hc *http.Client) (*httpFloor, error) {
	f := newHTTPFloor(s, hc)
	status, h, err := f.post(ctx, []byte(floorInitialize))
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("initialize: HTTP %d: %s", status, f.body.Bytes())
	}
	if err != nil {
		f.hc.CloseIdleConnections()
		return nil, err
	}
	if id := h.Get("Mcp-Session-Id"); id != "" {
		f.hdr["Mcp-Session-Id"] = []string{id}
	}
	f.hdr["Mcp-Protocol-Version"] = []string{floorVersion}
	status, _, err = f.post(ctx, []byte(floorInitialized))
	if err == nil && status != http.StatusAccepted {
		err = fmt.Errorf("notifications/initialized: HTTP %d: %s", status, f.body.Bytes())
	}
	if err == nil && s.listen {
		err = f.listen(ctx)
	}
	if err != nil {
		_ = f.close()
		return nil, err
	}
	return f, nil
}

// listen opens the standalone GET stream and holds it, reading nothing.
// The stream outlives dialCtx, which bounds only the wait for its answer.
func (f *httpFloor) listen(dialCtx context.Context) error {
	ctx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(dialCtx, cancel)
	defer stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.url, nil)
	if err != nil {
		cancel()
		return err
	}
	req.Header = f.hdr.Clone()
	req.Header["Accept"] = []string{"text/event-stream"}
	resp, err := f.hc.Do(req)
	if err != nil {
		cancel()
		return err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return fmt.Errorf("GET stream: HTTP %d", resp.StatusCode)
	}
	f.stream, f.endStream = resp, cancel
	return nil
}

// dialStatelessFloor makes a 2026-07-28 floor: no handshake, no session;
// every request carries _meta and the headers the revision requires.
func dialStatelessFloor(_ context.Context, s *server) (*httpFloor, error) {
	f := newHTTPFloor(s, newHTTPClient())
	f.modern = true
	f.callHdr = map[string]http.Header{}
	f.hdr["Mcp-Protocol-Version"] = []string{floorStatelessVersion}
	return f, nil
}

// post sends msg and reads the whole answer into f.body.
func (f *httpFloor) post(ctx context.Context, msg []byte) (int, http.Header, error) {
	return f.do(ctx, http.MethodPost, f.hdr, msg)
}

func (f *httpFloor) do(ctx context.Context, method string, hdr http.Header, msg []byte) (int, http.Header, error) {
	return roundTrip(ctx, f.hc, method, f.url, hdr, msg, &f.body)
}

// roundTrip sends msg with hdr and reads the whole answer into into.
func roundTrip(ctx context.Context, hc *http.Client, method, url string, hdr http.Header, msg []byte, into *bytes.Buffer) (int, http.Header, error) {
	var body io.Reader
	if msg != nil {
		body = bytes.NewReader(msg)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return 0, nil, err
	}
	req.Header = hdr
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	into.Reset()
	_, err = into.ReadFrom(resp.Body)
	return resp.StatusCode, resp.Header, err
}

// request returns the encoded tools/call of name and the headers to send
// it with.
func (f *httpFloor) request(name string, args map[string]any) ([]byte, http.Header, error) {
	if !f.modern {
		msg, err := f.reqs.request(name, args, false)
		return msg, f.hdr, err
	}
	msg, err := f.reqs.encode(name, args, floorStatelessMeta, false)
	if err != nil {
		return nil, nil, err
	}
	hdr, ok := f.callHdr[name]
	if !ok {
		hdr = f.hdr.Clone()
		hdr["Mcp-Method"] = []string{"tools/call"}
		hdr["Mcp-Name"] = []string{name}
		f.callHdr[name] = hdr
	}
	return msg, hdr, nil
}

func (f *httpFloor) callTool(ctx context.Context, name string, args map[string]any) (string, error) {
	msg, hdr, err := f.request(name, args)
	if err != nil {
		return "", err
	}
	status, _, err := f.do(ctx, http.MethodPost, hdr, msg)
	return "", expectOK(status, err, &f.body)
}

// caller returns a function that calls name with args, as callTool does,
// and returns the answer's body, read into a buffer of its own (valid
// until its next call): one function for each of many concurrent callers.
// caller must be called before they start.
func (f *httpFloor) caller(name string, args map[string]any) (func(context.Context) ([]byte, error), error) {
	msg, hdr, err := f.request(name, args)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	return func(ctx context.Context) ([]byte, error) {
		status, _, err := roundTrip(ctx, f.hc, http.MethodPost, f.url, hdr, msg, &buf)
		return buf.Bytes(), expectOK(status, err, &buf)
	}, nil
}

func (f *httpFloor) listTools(ctx context.Context) (int, error) {
	if !f.modern {
		return 0, f.expectOK(f.post(ctx, []byte(floorListTools)))
	}
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 3, "method": "tools/list",
		"params": map[string]any{"_meta": floorStatelessMeta}})
	if err != nil {
		return 0, err
	}
	hdr := f.hdr.Clone()
	hdr["Mcp-Method"] = []string{"tools/list"}
	return 0, f.expectOK(f.do(ctx, http.MethodPost, hdr, msg))
}

func (f *httpFloor) expectOK(status int, _ http.Header, err error) error {
	return expectOK(status, err, &f.body)
}

// expectOK turns an answer other than 200 into an error.
func expectOK(status int, err error, body *bytes.Buffer) error {
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("HTTP %d: %s", status, body.Bytes())
	}
	return err
}

// close ends the session (DELETE) and the connections.
func (f *httpFloor) close() error {
	if f.stream != nil {
		f.endStream()
		f.stream.Body.Close()
	}
	var err error
	if f.hdr.Get("Mcp-Session-Id") != "" {
		_, _, err = f.do(context.Background(), http.MethodDelete, f.hdr, nil)
	}
	f.hc.CloseIdleConnections()
	return err
}

func (f *httpFloor) last() []byte { return f.body.Bytes() }

// ---- stdio ----

type stdioFloor struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	line []byte
	reqs callCache
}

func dialStdioFloor(s *server) (*stdioFloor, error) {
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
	f := &stdioFloor{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10), reqs: callCache{}}
	err = f.roundTrip([]byte(floorInitialize + "\n"))
	if err == nil && !bytes.Contains(f.line, []byte(`"result"`)) {
		err = fmt.Errorf("initialize: %s", f.line)
	}
	if err == nil {
		_, err = f.in.Write([]byte(floorInitialized + "\n"))
	}
	if err != nil {
		_ = f.close()
		return nil, err
	}
	return f, nil
}

// roundTrip writes msg, a line, and reads one line into f.line.
func (f *stdioFloor) roundTrip(msg []byte) error {
	if _, err := f.in.Write(msg); err != nil {
		return err
	}
	f.line = f.line[:0]
	for {
		chunk, err := f.out.ReadSlice('\n')
		f.line = append(f.line, chunk...)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return err
		}
	}
}

func (f *stdioFloor) callTool(_ context.Context, name string, args map[string]any) (string, error) {
	msg, err := f.reqs.request(name, args, true)
	if err != nil {
		return "", err
	}
	return "", f.roundTrip(msg)
}

func (f *stdioFloor) listTools(context.Context) (int, error) {
	return 0, f.roundTrip([]byte(floorListTools + "\n"))
}

// close closes the child's stdin and waits for it to exit.
func (f *stdioFloor) close() error {
	_ = f.in.Close()
	return f.cmd.Wait()
}

func (f *stdioFloor) last() []byte { return f.line }

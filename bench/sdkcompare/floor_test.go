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

// floorVersion is the protocol revision the floor asks for.
const floorVersion = "2025-11-25"

const (
	floorInitialize  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + floorVersion + `","capabilities":{},"clientInfo":{"name":"floor","version":"v0"}}}`
	floorInitialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	floorListTools   = `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`
)

// rawBody is implemented by the floors: the bytes of the last answer.
type rawBody interface{ last() []byte }

func dialFloor(ctx context.Context, s *server) (conn, error) {
	if s.isHTTP() {
		return dialHTTPFloor(ctx, s)
	}
	return dialStdioFloor(s)
}

// callCache holds the encoded tools/call request of each tool name; a
// benchmark calls one tool with the same arguments, so each is encoded
// once.
type callCache map[string][]byte

func (c callCache) request(name string, args map[string]any, newline bool) ([]byte, error) {
	if b, ok := c[name]; ok {
		return b, nil
	}
	type params struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
	}
	b, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int    `json:"id"`
		Method  string `json:"method"`
		Params  params `json:"params"`
	}{"2.0", 2, "tools/call", params{name, args}})
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
}

func dialHTTPFloor(ctx context.Context, s *server) (*httpFloor, error) {
	f := &httpFloor{
		hc:   newHTTPClient(),
		url:  s.url,
		reqs: callCache{},
		hdr: http.Header{
			"Content-Type": {"application/json"},
			"Accept":       {"application/json, text/event-stream"},
		},
	}
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
	if err != nil {
		_ = f.close()
		return nil, err
	}
	return f, nil
}

// post sends msg and reads the whole answer into f.body.
func (f *httpFloor) post(ctx context.Context, msg []byte) (int, http.Header, error) {
	return f.do(ctx, http.MethodPost, msg)
}

func (f *httpFloor) do(ctx context.Context, method string, msg []byte) (int, http.Header, error) {
	var body io.Reader
	if msg != nil {
		body = bytes.NewReader(msg)
	}
	req, err := http.NewRequestWithContext(ctx, method, f.url, body)
	if err != nil {
		return 0, nil, err
	}
	req.Header = f.hdr
	resp, err := f.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	f.body.Reset()
	_, err = f.body.ReadFrom(resp.Body)
	return resp.StatusCode, resp.Header, err
}

func (f *httpFloor) callTool(ctx context.Context, name string, args map[string]any) (string, error) {
	msg, err := f.reqs.request(name, args, false)
	if err != nil {
		return "", err
	}
	return "", f.expectOK(f.post(ctx, msg))
}

func (f *httpFloor) listTools(ctx context.Context) (int, error) {
	return 0, f.expectOK(f.post(ctx, []byte(floorListTools)))
}

func (f *httpFloor) expectOK(status int, _ http.Header, err error) error {
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("HTTP %d: %s", status, f.body.Bytes())
	}
	return err
}

// close ends the session (DELETE) and the connections.
func (f *httpFloor) close() error {
	var err error
	if f.hdr.Get("Mcp-Session-Id") != "" {
		_, _, err = f.do(context.Background(), http.MethodDelete, nil)
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

package sdkcompare_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// sseFloor is the floor of HTTP+SSE (revision 2024-11-05): it holds the
// GET stream open, POSTs every message to the endpoint the stream named
// (answered 202, body read to the end), and reads every answer off the
// stream into a reused buffer, without decoding it.
type sseFloor struct {
	hc       *http.Client
	cancel   context.CancelFunc // ends the GET stream
	stream   *http.Response
	events   *bufio.Reader
	endpoint string
	hdr      http.Header // the headers of every POST; shared, never changed
	accepted bytes.Buffer
	line     []byte // the line being read
	data     []byte // the data of the last event
	reqs     callCache
}

func dialSSEFloor(ctx context.Context, s *server) (*sseFloor, error) {
	base, err := url.Parse(s.url)
	if err != nil {
		return nil, err
	}
	// The stream outlives the dial's context: it has one of its own.
	sctx, cancel := context.WithCancel(context.Background())
	f := &sseFloor{
		hc:     newHTTPClient(),
		cancel: cancel,
		reqs:   callCache{},
		hdr:    http.Header{"Content-Type": {"application/json"}},
	}
	req, err := http.NewRequestWithContext(sctx, http.MethodGet, s.url, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	stop := context.AfterFunc(ctx, cancel) // the dial's deadline bounds the connect
	defer stop()
	resp, err := f.hc.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	f.stream = resp
	f.events = bufio.NewReader(resp.Body) // 4 KiB: longer lines are put together in f.line
	if resp.StatusCode != http.StatusOK {
		_ = f.close()
		return nil, fmt.Errorf("GET %s: HTTP %d", s.url, resp.StatusCode)
	}
	event, err := f.next()
	if err == nil && event != "endpoint" {
		err = fmt.Errorf("first event %q, want endpoint", event)
	}
	var ep *url.URL
	if err == nil {
		ep, err = base.Parse(string(f.data))
	}
	if err != nil {
		_ = f.close()
		return nil, err
	}
	f.endpoint = ep.String()
	initialize := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + floorSSEVersion + `","capabilities":{},"clientInfo":{"name":"floor","version":"v0"}}}`)
	err = f.roundTrip(ctx, initialize)
	if err == nil && !bytes.Contains(f.data, []byte(`"result"`)) {
		err = fmt.Errorf("initialize: %s", f.data)
	}
	if err == nil {
		err = f.post(ctx, []byte(floorInitialized))
	}
	if err != nil {
		_ = f.close()
		return nil, err
	}
	return f, nil
}

// post sends msg to the endpoint and reads the answer's body to the end.
func (f *sseFloor) post(ctx context.Context, msg []byte) error {
	status, _, err := roundTrip(ctx, f.hc, http.MethodPost, f.endpoint, f.hdr, msg, &f.accepted)
	if err == nil && status/100 != 2 {
		err = fmt.Errorf("POST: HTTP %d: %s", status, f.accepted.Bytes())
	}
	return err
}

// roundTrip posts msg, a request, and reads the next message event off
// the stream into f.data.
func (f *sseFloor) roundTrip(ctx context.Context, msg []byte) error {
	if err := f.post(ctx, msg); err != nil {
		return err
	}
	for {
		event, err := f.next()
		if err != nil {
			return err
		}
		if event == "" || event == "message" {
			return nil
		}
	}
}

// next reads the next event off the stream: its type, and its data into
// f.data (data lines joined by newlines). It reads "field: value" lines
// as the server writes them; comments and other fields are skipped.
func (f *sseFloor) next() (string, error) {
	var event string
	f.data = f.data[:0]
	seen := false
	for {
		line, err := f.readLine()
		if err != nil {
			return "", err
		}
		if len(line) == 0 {
			if seen {
				return event, nil
			}
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(name) {
		case "event":
			event, seen = string(value), true
		case "data":
			if seen && len(f.data) > 0 {
				f.data = append(f.data, '\n')
			}
			f.data, seen = append(f.data, value...), true
		}
	}
}

// readLine reads one line into f.line, without its line ending.
func (f *sseFloor) readLine() ([]byte, error) {
	f.line = f.line[:0]
	for {
		chunk, err := f.events.ReadSlice('\n')
		f.line = append(f.line, chunk...)
		switch {
		case err == nil:
			return bytes.TrimSuffix(bytes.TrimSuffix(f.line, []byte("\n")), []byte("\r")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}

func (f *sseFloor) callTool(ctx context.Context, name string, args map[string]any) (string, error) {
	msg, err := f.reqs.request(name, args, false)
	if err != nil {
		return "", err
	}
	return "", f.roundTrip(ctx, msg)
}

func (f *sseFloor) listTools(ctx context.Context) (int, error) {
	return 0, f.roundTrip(ctx, []byte(floorListTools))
}

// close ends the stream, and with it the session, and the connections.
func (f *sseFloor) close() error {
	f.cancel()
	if f.stream != nil {
		_ = f.stream.Body.Close()
	}
	f.hc.CloseIdleConnections()
	return nil
}

func (f *sseFloor) last() []byte { return f.data }

package wire

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/testservers"
)

// Over HTTP/2, net/http sends a request again by itself after a stream
// reset that came before the answer, taking the body from GetBody. After
// RST_STREAM PROTOCOL_ERROR the server may have read the request whole
// and run it: Delivery gives no body for that, so the request reaches the
// server once and the attempt stays sent. A request that never went out
// in full (a stream refused before its body could be written) may be sent
// again: the server cannot have run it.
func TestDeliveryHTTP2ResendsOnlyWhatDidNotGoOut(t *testing.T) {
	ctx := context.Background()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"once"}}`)

	srv := testservers.StartH2Faults(testservers.H2Fault{Reset: testservers.H2ProtocolError})
	defer srv.Close()
	req, d, _ := NewPost(ctx, http.MethodPost, srv.URL, body)
	resp, err := srv.Client().Do(req)
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, ErrUnansweredResend) || !d.Sent() || srv.Received() != 1 {
		t.Fatalf("a stream reset (PROTOCOL_ERROR) after the server read the request: err %v, sent %v, the server read it %d times; "+
			"want ErrUnansweredResend, sent, read once", err, d.Sent(), srv.Received())
	}

	// The body is bigger than the stream's window, which the server never
	// widens: the stream is refused with part of the body unwritten.
	big := append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"pad":"`), bytes.Repeat([]byte("x"), 100<<10)...), `"}}`...)
	srv2 := testservers.StartH2Faults(testservers.H2Fault{Reset: testservers.H2RefusedStream, Early: true})
	defer srv2.Close()
	req, d, _ = NewPost(ctx, http.MethodPost, srv2.URL, big)
	resp, err = srv2.Client().Do(req)
	if err != nil || resp.StatusCode != http.StatusOK || !d.Sent() || srv2.Begun() != 2 || srv2.Received() != 1 {
		t.Fatalf("a stream refused before its body went out: err %v, sent %v, begun %d, read whole %d; "+
			"want 200 on the second attempt, sent, begun twice, read whole once", err, d.Sent(), srv2.Begun(), srv2.Received())
	}
	resp.Body.Close()
}

// How a request fares, over HTTP/2, against each fault at the level of
// frames: a stream reset or a GOAWAY, after the server read the request
// whole (the server may have run it: sent, never sent again — even after
// REFUSED_STREAM or GOAWAY, which say it was not processed, since
// net/http's resend cannot be told from the one after PROTOCOL_ERROR), or
// before its body could go out (not sent; net/http's own resend, where it
// makes one, reaches the server once whole).
func TestDeliveryHTTP2FrameFaults(t *testing.T) {
	small := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"once"}}`)
	big := append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"pad":"`), bytes.Repeat([]byte("x"), 100<<10)...), `"}}`...)
	for _, tt := range []struct {
		name           string
		fault          testservers.H2Fault
		body           []byte
		answered, sent bool
		unanswered     bool // ErrUnansweredResend
		begun, read    int
	}{
		{"INTERNAL_ERROR after", testservers.H2Fault{Reset: testservers.H2InternalError}, small, false, true, false, 1, 1},
		{"CANCEL after", testservers.H2Fault{Reset: testservers.H2Cancel}, small, false, true, false, 1, 1},
		{"REFUSED_STREAM after", testservers.H2Fault{Reset: testservers.H2RefusedStream}, small, false, true, true, 1, 1},
		{"GOAWAY after", testservers.H2Fault{GoAway: true}, small, false, true, true, 1, 1},
		{"INTERNAL_ERROR before the body", testservers.H2Fault{Reset: testservers.H2InternalError, Early: true}, big, false, false, false, 1, 0},
		{"PROTOCOL_ERROR before the body", testservers.H2Fault{Reset: testservers.H2ProtocolError, Early: true}, big, true, true, false, 2, 1},
		{"GOAWAY before the body", testservers.H2Fault{GoAway: true, Early: true}, big, true, true, false, 2, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := testservers.StartH2Faults(tt.fault)
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			req, d, _ := NewPost(ctx, http.MethodPost, srv.URL, tt.body)
			resp, err := srv.Client().Do(req)
			if err == nil {
				resp.Body.Close()
			}
			if (err == nil) != tt.answered || d.Sent() != tt.sent || errors.Is(err, ErrUnansweredResend) != tt.unanswered ||
				srv.Begun() != tt.begun || srv.Received() != tt.read {
				t.Errorf("err %v, sent %v, begun %d, read whole %d; want answered %v, sent %v, ErrUnansweredResend %v, begun %d, read whole %d",
					err, d.Sent(), srv.Begun(), srv.Received(), tt.answered, tt.sent, tt.unanswered, tt.begun, tt.read)
			}
		})
	}
}

// The retrying client takes a body for its first attempt before it waits
// out a 429 (that attempt is the 429 already received), and another for
// the resend. Over HTTP/2 net/http may report the write of the request
// the 429 answered only after that first body was taken: the report is
// the earlier attempt's, and the resend still gets its body.
func TestDeliveryLateWriteReportIsTheEarlierAttempts(t *testing.T) {
	req, d, _ := NewPost(context.Background(), http.MethodPost, "http://127.0.0.1/mcp", []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	tr := httptrace.ContextClientTrace(req.Context())
	tr.GetConn("127.0.0.1:80")
	tr.WroteHeaders()
	tr.GotFirstResponseByte() // 429, before the body's write is reported
	if _, err := req.GetBody(); err != nil {
		t.Fatalf("a body after a 429: %v", err)
	}
	tr.WroteRequest(httptrace.WroteRequestInfo{}) // the answered attempt's, late
	if d.Sent() {
		t.Fatal("the late report counted for the attempt after it, which wrote nothing")
	}
	if _, err := req.GetBody(); err != nil {
		t.Fatalf("the resend's body, after a late report of the attempt answered 429: %v", err)
	}
	tr.GetConn("127.0.0.1:80")
	tr.WroteHeaders()
	tr.WroteRequest(httptrace.WroteRequestInfo{})
	if !d.Sent() {
		t.Fatal("the resend went out in full: want sent")
	}
}

// holdingConn passes every write on to its connection; once its gate is
// armed, the first write of at least min bytes is then held — gone out,
// but not yet returned to its writer — until the gate is released.
type holdingConn struct {
	net.Conn
	g *gate
}

type gate struct {
	min     int
	armed   atomic.Bool
	held    chan struct{} // closed once a write is held
	release chan struct{}
	once    sync.Once
}

func newGate(min int) *gate {
	return &gate{min: min, held: make(chan struct{}), release: make(chan struct{})}
}

func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

func (c *holdingConn) Write(p []byte) (int, error) {
	hold := len(p) >= c.g.min && c.g.armed.CompareAndSwap(true, false)
	if hold {
		close(c.g.held) // before the bytes go: before anything can answer them
	}
	n, err := c.Conn.Write(p)
	if hold {
		<-c.g.release
	}
	return n, err
}

// holdingClient is srv's client over connections that g holds. Each TLS
// record goes out in one write (no dynamic record sizing), so that a
// request body of a few KiB is one write.
func holdingClient(t *testing.T, srv *httptest.Server, g *gate) *http.Client {
	tr := srv.Client().Transport.(*http.Transport).Clone()
	tr.TLSClientConfig.DynamicRecordSizingDisabled = true
	var dialer net.Dialer
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &holdingConn{Conn: c, g: g}, nil
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// Over HTTP/2 the body of a request goes out on a goroutine of its own,
// and the server's answer may reach the caller before that goroutine has
// told httptrace that the body went out. A server that read the request
// whole and answered 500 may have run it: the attempt is sent though the
// write has not been reported yet.
func TestDeliveryAnsweredBeforeTheWriteIsReportedIsSent(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil || r.Method != http.MethodPost {
			return
		}
		http.Error(w, "the tool failed", http.StatusInternalServerError)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	g := newGate(8 << 10)
	defer g.open()
	client := holdingClient(t, srv, g)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	warm, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	resp, err := client.Do(warm) // the connection is up: the next request's body is one write
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	body := append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"pad":"`), bytes.Repeat([]byte("x"), 12<<10)...), `"}}`...)
	req, d, _ := NewPost(ctx, http.MethodPost, srv.URL, body)
	g.armed.Store(true)
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	held := false
	select {
	case <-g.held:
		held = true
	default:
	}
	sent := d.Sent()
	g.open() // before closing the body: the held write keeps the connection's write lock
	resp.Body.Close()
	if !held {
		t.Fatal("the body's write was not held")
	}
	if resp.ProtoMajor != 2 || resp.StatusCode != http.StatusInternalServerError || !sent {
		t.Fatalf("HTTP/%d %d to a request read whole, its write not reported yet: sent %v; want HTTP/2 500, sent", resp.ProtoMajor, resp.StatusCode, sent)
	}
}

package wire

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptrace"
	"testing"

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

package modern

import (
	"errors"
	"testing"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/testservers"
)

// A server reached over HTTP/2 resets the stream of a tools/call it read
// whole (RST_STREAM PROTOCOL_ERROR, before any answer): net/http would
// send the request again by itself, on a new connection. The tool may have
// run: it reaches the server once and Send's error is outcome unknown.
func TestSendHTTP2StreamResetAfterRequestIsNotSentAgain(t *testing.T) {
	srv := testservers.StartH2Faults(testservers.H2Fault{Reset: testservers.H2ProtocolError})
	t.Cleanup(srv.Close)
	tr := newTransport(t, srv.URL, Options{HTTPClient: srv.Client(), Reconnect: tiny()})
	err := sendErr(tr, request(5, "tools/call"))
	if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
		t.Errorf("Send = %v; want an error matching ErrOutcomeUnknown", err)
	}
	if n := srv.Received(); n != 1 {
		t.Errorf("the server read the request %d times; want 1", n)
	}
}

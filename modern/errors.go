package modern

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
)

// ErrNoResponse: the server accepted a request (2xx) but no response to it
// will ever come: it answered with no body, or it ended the answer's event
// stream cleanly after sending a response to another id. The error that
// reports it also wraps jsonrpc.ErrOutcomeUnknown, because the server may
// have run the request.
var ErrNoResponse = errors.New("the server accepted the request but sent no response")

// ErrEndpointEvent: the server answered a POST with an event stream whose
// first event is an HTTP+SSE endpoint event, as a 2024-11-05 server does
// when a POST reaches its SSE URL (go-mcp's, for one): it opened a session
// stream, and no response will come on it. The error that reports it also
// wraps jsonrpc.ErrOutcomeUnknown: no server of that kind runs the request,
// but one that is not may have. The negotiation takes it as the sign of an
// HTTP+SSE server.
var ErrEndpointEvent = errors.New("the server answered with an HTTP+SSE endpoint event, as a 2024-11-05 server does, not with a response")

// ErrInvalidSessionID: the Mcp-Session-Id the server assigned holds bytes
// other than visible ASCII (0x21–0x7E), which the specification forbids and
// which could not be sent back safely in a header, or is longer than
// MaxSessionIDLen. The initialize request that got it fails with it.
var ErrInvalidSessionID = errors.New("invalid Mcp-Session-Id from server")

// MaxSessionIDLen is the longest Mcp-Session-Id the transport accepts, in
// bytes. The specification sets no limit; ids in use (UUIDs, hashes, signed
// tokens) are far shorter. A longer one would be sent back on every request,
// so it is refused with ErrInvalidSessionID.
const MaxSessionIDLen = 1024

// ErrContentType: a 2xx answer to a request had a content type that is
// neither application/json nor text/event-stream.
var ErrContentType = errors.New("unexpected content type")

// streamError reports an SSE stream that ended before the response to the
// request it answers. It keeps the stream's cursor (the last event id and the
// server's retry delay) for the resumption that uses them, and, once
// resuming failed, why and how often it was tried.
type streamError struct {
	method      string
	id          jsonrpc.ID
	lastEventID string
	retry       time.Duration
	hasRetry    bool
	cause       error  // io.EOF or the read error of the last stream
	resumes     int    // GETs sent to resume the stream
	gaveUp      string // why resuming stopped; "" when it was not tried
	last        error  // the failure of the last resuming GET, if it failed
}

func (e *streamError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Streamable HTTP: %s (id %s): the event stream ended before the response", e.method, e.id)
	if e.cause != nil && e.cause != io.EOF {
		b.WriteString(" (")
		b.WriteString(e.cause.Error())
		b.WriteString(")")
	}
	if e.lastEventID != "" {
		fmt.Fprintf(&b, "; last event id %q", e.lastEventID)
	}
	if e.gaveUp != "" {
		b.WriteString("; ")
		b.WriteString(e.gaveUp)
		if e.last != nil {
			b.WriteString(" (last: ")
			b.WriteString(e.last.Error())
			b.WriteString(")")
		}
	}
	b.WriteString(": ")
	b.WriteString(jsonrpc.ErrOutcomeUnknown.Error())
	return b.String()
}

func (e *streamError) Unwrap() []error {
	errs := []error{jsonrpc.ErrOutcomeUnknown}
	if e.cause != nil && e.cause != io.EOF {
		errs = append(errs, e.cause)
	}
	if e.last != nil {
		errs = append(errs, e.last)
	}
	return errs
}

// reason says, for the log, how the stream ended.
func (e *streamError) reason() string {
	if e.cause == nil || e.cause == io.EOF {
		return "the server ended the stream before the response"
	}
	return "the stream broke before the response: " + e.cause.Error()
}

// sessionIDShown is how much of a refused session id an error shows.
const sessionIDShown = 64

// sessionIDProblem says what is wrong with a session id the server
// assigned, or returns "" when it is non-empty visible ASCII of at most
// MaxSessionIDLen bytes.
func sessionIDProblem(s string) string {
	if len(s) > MaxSessionIDLen {
		return fmt.Sprintf("%d bytes, over the limit of %d", len(s), MaxSessionIDLen)
	}
	if !visibleASCII(s) {
		// Quoting can make a byte ten: quote a bounded head only.
		head, more := s, ""
		if len(head) > sessionIDShown {
			head, more = head[:sessionIDShown], "…"
		}
		return fmt.Sprintf("%s%s holds bytes outside visible ASCII 0x21-0x7E", strconv.QuoteToASCII(head), more)
	}
	return ""
}

// visibleASCII reports whether s is non-empty visible ASCII (0x21–0x7E):
// a header value sent back exactly as received.
func visibleASCII(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7E {
			return false
		}
	}
	return true
}

package modern

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/anymcp/anymcp/jsonrpc"
)

// ErrNoResponse: the server accepted a request (2xx) but answered with no
// body, so no response to it will ever come. The error that reports it also
// wraps jsonrpc.ErrOutcomeUnknown, because the server may run the request.
var ErrNoResponse = errors.New("the server accepted the request but sent no response")

// ErrInvalidSessionID: the Mcp-Session-Id the server assigned holds bytes
// other than visible ASCII (0x21–0x7E), which the specification forbids and
// which could not be sent back safely in a header.
var ErrInvalidSessionID = errors.New("invalid Mcp-Session-Id from server")

// ErrContentType: a 2xx answer to a request had a content type that is
// neither application/json nor text/event-stream.
var ErrContentType = errors.New("unexpected content type")

const (
	// errorBodyLimit bounds how much of an error body is read: enough for a
	// JSON-RPC error object, little enough that a hostile server cannot make
	// the client buffer megabytes to report a failure.
	errorBodyLimit = 16 << 10
	// excerptLimit bounds HTTPError.Body and logged excerpts.
	excerptLimit = 512
	// drainLimit bounds how much of a body nobody needs is read so that its
	// connection can be reused.
	drainLimit = 64 << 10
)

// newHTTPError reads at most errorBodyLimit bytes of resp's body and
// describes the exchange. The caller closes the body.
func newHTTPError(resp *http.Response, method, url string) *jsonrpc.HTTPError {
	e := &jsonrpc.HTTPError{Method: method, URL: url, StatusCode: resp.StatusCode}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, errorBodyLimit))
	e.Body = excerpt(body)
	if msgs, _ := jsonrpc.Decode(body); len(msgs) > 0 {
		for _, m := range msgs {
			if m.Error != nil {
				e.RPCError = m.Error
				break
			}
		}
	}
	return e
}

// excerpt returns the start of b as valid UTF-8 text of at most excerptLimit
// bytes, surrounding white space removed.
func excerpt(b []byte) string {
	if len(b) > 4*excerptLimit {
		b = b[:4*excerptLimit]
	}
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
	if len(s) <= excerptLimit {
		return s
	}
	cut := excerptLimit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// streamError reports an SSE stream that ended before the response to the
// request it answers. It keeps the stream's cursor (the last event id and the
// server's retry delay) for the resumption that will use them.
type streamError struct {
	method      string
	id          jsonrpc.ID
	lastEventID string
	retry       time.Duration
	hasRetry    bool
	cause       error // io.EOF or the read error
}

func (e *streamError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "modern: %s (id %s): the event stream ended before the response", e.method, e.id)
	if e.cause != nil && e.cause != io.EOF {
		b.WriteString(" (")
		b.WriteString(e.cause.Error())
		b.WriteString(")")
	}
	if e.lastEventID != "" {
		fmt.Fprintf(&b, "; last event id %q", e.lastEventID)
	}
	b.WriteString(": ")
	b.WriteString(jsonrpc.ErrOutcomeUnknown.Error())
	return b.String()
}

func (e *streamError) Unwrap() []error {
	if e.cause == nil || e.cause == io.EOF {
		return []error{jsonrpc.ErrOutcomeUnknown}
	}
	return []error{jsonrpc.ErrOutcomeUnknown, e.cause}
}

// validSessionID reports whether s is non-empty visible ASCII.
func validSessionID(s string) bool {
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

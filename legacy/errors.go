package legacy

import (
	"errors"
	"strconv"
)

// ErrNoEndpoint: the SSE stream did not start with an "endpoint" event that
// holds a usable URI: its first event had another type, its data was empty,
// not a URI or longer than MaxEndpointLen, or the stream ended before any
// event.
var ErrNoEndpoint = errors.New("no endpoint event on the SSE stream")

// MaxEndpointLen bounds the endpoint event: a URL longer than 8 KiB is
// refused (ErrNoEndpoint). The endpoint is kept for the session, goes into
// every POST and, redacted, into errors and the negotiation report; a
// hostile server could otherwise make each of them megabytes.
const MaxEndpointLen = 8 << 10

// ErrConnectionLost: the SSE stream ended or broke after Dial. The session
// went with it: nothing more will arrive from the server, so no request in
// flight will be answered. Recv and Send return errors that wrap it (and,
// for a broken stream, the read error too).
var ErrConnectionLost = errors.New("connection lost")

// NotSSEError is returned by Dial when the server answered the GET with a
// 2xx status but a body that is not an event stream (text/event-stream):
// the URL is not the SSE endpoint of an HTTP+SSE server (it may well be a
// Streamable HTTP endpoint, or a web page).
type NotSSEError struct {
	URL         string // the SSE URL, password redacted
	Status      int    // the HTTP status code
	ContentType string // the Content-Type of the answer, as sent ("" if none)
}

// Error reads like "GET http://h/mcp → 200, not an SSE stream (application/json)".
func (e *NotSSEError) Error() string {
	ct := e.ContentType
	if ct == "" {
		ct = "no content type"
	}
	return "GET " + e.URL + " → " + strconv.Itoa(e.Status) + ", not an SSE stream (" + ct + ")"
}

// CrossOriginError is returned by Dial when the endpoint event names a URI
// whose origin (scheme, host or port, default ports filled in) differs from
// the SSE URL's. The endpoint is refused and the stream closed before any
// request goes there, so the host's headers never reach another origin.
type CrossOriginError struct {
	SSEURL   string // the SSE URL, password redacted
	Endpoint string // the endpoint as resolved, password redacted
}

func (e *CrossOriginError) Error() string {
	return "endpoint " + e.Endpoint + " is on another origin than the SSE URL " + e.SSEURL + ": refused"
}

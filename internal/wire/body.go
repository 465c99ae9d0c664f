package wire

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/anymcp/anymcp/jsonrpc"
)

const (
	// ErrorBodyLimit bounds how much of an error body is read: enough for a
	// JSON-RPC error object, little enough that a hostile server cannot make
	// the client buffer megabytes to report a failure.
	ErrorBodyLimit = 16 << 10
	// ExcerptLimit bounds HTTPError.Body and logged excerpts.
	ExcerptLimit = 512
	// DrainLimit bounds how much of an unneeded body is read so that its
	// connection can be reused.
	DrainLimit = 64 << 10
)

// NewHTTPError describes an exchange that ended in a status the transport
// cannot use, reading at most ErrorBodyLimit bytes of its body; the JSON-RPC
// error the body holds, if any, becomes RPCError. What the body says of the
// request's headers (HideRequestSecrets) is not shown, in Body nor in
// RPCError's message. The caller closes the body.
func NewHTTPError(resp *http.Response, method, url string) *jsonrpc.HTTPError {
	e := &jsonrpc.HTTPError{Method: method, URL: url, StatusCode: resp.StatusCode}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, ErrorBodyLimit))
	e.Body = HideRequestSecrets(Excerpt(body), resp.Request)
	msgs, _ := jsonrpc.Decode(body)
	for _, m := range msgs {
		if m.Error != nil {
			rpc := *m.Error
			rpc.Message = HideRequestSecrets(rpc.Message, resp.Request)
			if data := HideRequestSecrets(string(rpc.Data), resp.Request); data != string(rpc.Data) {
				rpc.Data = []byte(data)
				if !json.Valid(rpc.Data) { // a secret cut through its syntax
					rpc.Data, _ = json.Marshal(data)
				}
			}
			e.RPCError = &rpc
			break
		}
	}
	return e
}

// Excerpt returns the start of b as valid UTF-8 of at most ExcerptLimit
// bytes, without surrounding white space.
func Excerpt(b []byte) string {
	if len(b) > 4*ExcerptLimit {
		b = b[:4*ExcerptLimit]
	}
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
	if len(s) <= ExcerptLimit {
		return s
	}
	cut := ExcerptLimit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// Drain reads and discards at most DrainLimit bytes of body so that its
// connection can be reused; it returns how much it read. The caller closes
// the body.
func Drain(body io.Reader) int64 {
	n, _ := io.CopyN(io.Discard, body, DrainLimit)
	return n
}

// MediaType returns the media type of a Content-Type value, lower case,
// without parameters.
func MediaType(contentType string) string {
	if i := strings.IndexByte(contentType, ';'); i >= 0 {
		contentType = contentType[:i]
	}
	return strings.ToLower(strings.TrimSpace(contentType))
}

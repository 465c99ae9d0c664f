package client

import (
	"bytes"
	"encoding/json"

	"github.com/anymcp/anymcp/mcp"
)

// ForClient makes the call one made on behalf of another client, such as a
// bridge's downstream client. caps are that client's capabilities, a
// ClientCapabilities JSON object.
//
// On a stateless server (revision 2026-07-28), the request's _meta declares
// caps instead of the Conn's own capabilities. An input_required answer is
// the call's result, as the server sent it. The Conn's handlers do not answer
// it: the caller puts it to that client and sends the retry itself. A task
// handle (resultType task, the tasks extension) is the result too, for that
// client to wait for. The Conn does not wait for it. On an initialize-era
// server, the session holds the client's capabilities, and ForClient changes
// nothing.
func ForClient(caps json.RawMessage) CallOption {
	return func(c *callOptions) {
		if len(bytes.TrimSpace(caps)) == 0 {
			caps = json.RawMessage(`{}`)
		}
		c.forClient = caps
	}
}

// withCapabilities returns the members meta (the dialect's, as
// statelessMeta writes them: clientCapabilities last, then any progress
// token and log level) with the client capabilities replaced by caps.
func withCapabilities(meta []byte, caps json.RawMessage) []byte {
	key := []byte(`"` + mcp.MetaClientCapabilities + `":`)
	i := bytes.Index(meta, key)
	if i < 0 {
		return meta
	}
	start := i + len(key)
	// The old value is one JSON object: find where it ends.
	end := start + objectEnd(meta[start:])
	if end < start {
		dec := json.NewDecoder(bytes.NewReader(meta[start:]))
		var old json.RawMessage
		if err := dec.Decode(&old); err != nil {
			return meta
		}
		end = start + int(dec.InputOffset())
	}
	out := make([]byte, 0, len(meta)-(end-start)+len(caps))
	out = append(out, meta[:start]...)
	out = append(out, caps...)
	return append(out, meta[end:]...)
}

// objectEnd returns the length of the JSON object data starts with (as
// the dialect writes one: no white space before it), or -1 when data does
// not start with an object that closes, which the caller leaves to a JSON
// decoder. Strings are skipped whole, escapes included.
func objectEnd(data []byte) int {
	if len(data) == 0 || data[0] != '{' {
		return -1
	}
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

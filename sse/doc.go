// Package sse parses text/event-stream bodies (Server-Sent Events).
//
// MCP servers send their messages as Server-Sent Events in two places: the
// Streamable HTTP transport (2025-03-26 and later) answers a POST or a GET with
// a text/event-stream body, and the legacy HTTP+SSE transport (2024-11-05)
// keeps one long-lived GET stream open that first carries an "endpoint" event
// and then every server message as a "message" event. Both transports read
// their streams through a [Reader].
//
// The parser follows the event stream interpretation rules of the WHATWG HTML
// standard (section "Server-sent events"): CRLF, LF and CR line endings (also
// when a CRLF pair is split between two reads), a leading byte order mark,
// comments, the "data", "event", "id" and "retry" fields, and dispatch on a
// blank line. It keeps the last event ID and the last valid retry value so a
// transport can resume a stream with Last-Event-ID and honour the server's
// reconnection delay.
//
// One deliberate difference from a browser: the bytes of the stream are not
// re-encoded. Invalid UTF-8 is passed through unchanged in Event.Data,
// Event.Type and Event.ID instead of being replaced with U+FFFD; the JSON
// decoder that consumes the data reports such input itself.
//
// The parser runs in time linear in the size of its input and bounds the
// memory one event may use (see [NewReader] and [ErrEventTooLarge]). It reads
// into, and collects an event's data in, fixed-size blocks from a pool shared
// by all Readers, so a stream allocates no buffers of its own and a big event
// is never regrown; each event then gets its data in one allocation of its
// exact size, which the caller owns and which shares no memory with the
// Reader. Between lines with nothing unread, a Reader waits for bytes in a
// 512-byte buffer and holds no block, so an idle stream costs little; in
// the middle of a line it reads on up to a block at a time. A Reader gives
// its blocks back when Next fails (io.EOF included) or on
// [Reader.Release]. It depends only on the standard library.
package sse

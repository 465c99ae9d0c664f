// Package sse parses text/event-stream bodies (Server-Sent Events), as both
// MCP HTTP transports receive them: Streamable HTTP answers a POST or a GET
// with one, and HTTP+SSE keeps one GET stream open.
//
//	r := sse.NewReader(resp.Body, 0) // 0: DefaultMaxEventSize
//	defer r.Release()
//	for {
//		ev, err := r.Next()
//		if err != nil { ... } // io.EOF at the end of the stream
//		use(ev.Type, ev.Data)
//	}
//
// The parser follows the WHATWG rules for event streams (CR, LF and CRLF
// line endings, a leading byte order mark, comments, the data, event, id
// and retry fields) and keeps the last event id and retry value a
// transport needs to resume with Last-Event-ID. Unlike a browser it passes
// invalid UTF-8 through unchanged; the JSON decoder reports it.
//
// It runs in time linear in its input and bounds the memory one event may
// take ([ErrEventTooLarge]); an idle Reader holds no buffer block. It
// depends only on the standard library. Why the library has its own
// parser, with the numbers: docs/design.md in the repository.
package sse

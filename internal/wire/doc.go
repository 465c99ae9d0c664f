// Package wire holds what the two HTTP transports, modern (Streamable HTTP)
// and legacy (HTTP+SSE), share: the unbounded queue between their stream
// readers and Recv, and the reading of HTTP bodies they cannot use (error
// bodies, excerpts, drains, media types).
package wire

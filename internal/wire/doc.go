// Package wire holds what the two HTTP transports, modern (Streamable HTTP)
// and legacy (HTTP+SSE), share: the queue between their stream readers and
// Recv, and the reading of HTTP bodies they cannot use (error bodies,
// excerpts, drains, media types). Taker, the holder of the protocol layer's
// jsonrpc.AnswerTaker function, serves stdio too.
//
// The queue is bounded, by message count (MaxQueued) and by bytes of
// server input (MaxQueuedBytes). Under backpressure nothing is dropped: a
// stream reader that finds the queue full waits for room, so it stops
// reading its connection and TCP flow control pushes back on the server.
// Its consumer must therefore never wait for anything that itself waits
// for the queue to drain; the client's read loop, which only routes
// messages, does not.
package wire

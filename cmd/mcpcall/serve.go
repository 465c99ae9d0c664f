package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/anymcp/anymcp/testservers"
)

// serveDemo runs the built-in Streamable HTTP test server at addr until
// ctx ends (Ctrl-C), so that the examples of docs/mcpcall.md have a server to talk
// to: its tools are echo, add, slow, fail, log, content_types and more.
func (c *cli) serveDemo(ctx context.Context, addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return usageErr("demo --serve: %v", err)
	}
	h := testservers.NewStreamableHandler(testservers.HTTPOptions{})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	fmt.Fprintf(c.stdout, "serving the test server at http://%s/mcp (Ctrl-C to stop)\n", l.Addr())
	select {
	case err = <-done:
	case <-ctx.Done():
		h.Close()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err = srv.Shutdown(sctx); errors.Is(err, context.DeadlineExceeded) {
			err = srv.Close() // connections still busy after the grace period: cut them
		}
		<-done
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

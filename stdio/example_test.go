//go:build unix

package stdio_test

import (
	"context"
	"fmt"
	"log"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/stdio"
)

// Start a server, exchange a message and shut it down. Here the "server" is
// cat, which sends every line straight back.
func Example() {
	t, err := stdio.Start(stdio.Command{Path: "cat"})
	if err != nil {
		log.Fatal(err)
	}
	defer t.Close()

	ping := &jsonrpc.Message{ID: jsonrpc.Int(1), Method: "ping"}
	if err := t.Send(context.Background(), ping); err != nil {
		log.Fatal(err)
	}
	m, err := t.Recv()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("received", m.Method, "with id", m.ID)

	// Close closes cat's stdin; cat exits 0, so the shutdown is clean.
	fmt.Println("close:", t.Close())
	// Output:
	// received ping with id 1
	// close: <nil>
}

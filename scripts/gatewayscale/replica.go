package main

import (
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/anymcp/anymcp/bridge"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/fleet"
	"github.com/anymcp/anymcp/gateway"
)

// replica is `gatewayscale replica --listen ADDR --state-key-file F
// --id NAME NAME=URL...`: gateway.New over a fleet of the servers named,
// served on ADDR until SIGTERM. It prints the line
// "listening on http://ADDR/mcp" on stderr once it serves.
func replica(args []string) int {
	fs := flag.NewFlagSet("replica", flag.ContinueOnError)
	listen := fs.String("listen", "127.0.0.1:0", "address")
	keyFile := fs.String("state-key-file", "", "the shared state key, hex")
	id := fs.String("id", "", "the replica's ID in the state it seals")
	if err := fs.Parse(args); err != nil || fs.NArg() == 0 || *keyFile == "" {
		fmt.Fprintln(os.Stderr, "replica: usage: replica --listen ADDR --state-key-file F --id NAME NAME=URL...")
		return 2
	}
	raw, err := os.ReadFile(*keyFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		return 2
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil {
		fmt.Fprintln(os.Stderr, "replica: the state key is not hex:", err)
		return 2
	}
	var servers []fleet.Server
	for _, a := range fs.Args() {
		name, u, ok := strings.Cut(a, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "replica: %q is not NAME=URL\n", a)
			return 2
		}
		servers = append(servers, fleet.Server{Name: name, Target: client.URL(u)})
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	g, err := gateway.New(ctx, servers, gateway.Config{Bridge: bridge.Options{StateKey: key, ReplicaID: *id}})
	if err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		return 2
	}
	defer g.Close()
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		return 2
	}
	srv := &http.Server{Handler: g.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { <-ctx.Done(); srv.Close() }()
	fmt.Fprintf(os.Stderr, "listening on http://%s/mcp\n", l.Addr())
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "replica:", err)
		return 1
	}
	return 0
}

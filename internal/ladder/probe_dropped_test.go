package ladder_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/ladder"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/testservers"
)

// A server that drops the connection on a method it does not know (the
// HTTP transport of mcp-golang panics): the stateless probe's failure is
// reported as itself, matching ErrProbeDropped, which says the initialize era
// alone may reach it; and so it does.
func TestProbeDropped(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{OnRequest: func(r *http.Request) {
		if r.Header.Get("Mcp-Method") == "server/discover" {
			panic(http.ErrAbortHandler) // as any panic in a handler: the connection is closed
		}
	}})
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := ladder.Connect(ctx, srv.URL, dualHello(), ladder.Config{})
	var negErr *negotiate.Error
	if !errors.Is(err, negotiate.ErrProbeDropped) || !errors.As(err, &negErr) || len(negErr.Report.Attempts) != 1 {
		t.Fatalf("err %v, want ErrProbeDropped after the probe alone", err)
	}
	res, err := ladder.Connect(ctx, srv.URL, dualHello(), ladder.Config{Era: negotiate.InitializeOnly})
	if err != nil {
		t.Fatalf("initialize era: %v", err)
	}
	res.Transport.Close()
}

package ladder_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/ladder"
	"github.com/anymcp/anymcp/negotiate"
	"github.com/anymcp/anymcp/testservers"
)

// An HTTP+SSE server that answers a POST to its SSE URL as a GET (go-mcp's
// does): 200 text/event-stream, an endpoint event, and never a response.
// The endpoint event says a 2024-11-05 server, so the ladder goes to
// HTTP+SSE at once, the stateless probe's answer skipping the POST of
// initialize too, where it waited for a response until the connect timeout
// ran out. The timeout here is long: the ladder must not need it, and the
// report says why it moved on.
func TestEndpointEventOnPost(t *testing.T) {
	srv := testservers.StartLegacy(testservers.LegacyOptions{StreamOnPost: true})
	defer srv.Close()
	for _, tc := range []struct {
		name    string
		hello   ladder.Hello
		request string // the POSTed one
	}{
		{"dual-era", dualHello(), negotiate.RequestDiscover},
		{"initialize era", initializeHello(), negotiate.RequestInitialize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const connectTimeout = time.Minute
			ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
			defer cancel()
			start := time.Now()
			res, err := ladder.Connect(ctx, srv.URL, tc.hello, ladder.Config{})
			if err != nil {
				t.Fatalf("after %v: %v", time.Since(start), err)
			}
			defer res.Transport.Close()
			if took := time.Since(start); took > connectTimeout/10 {
				t.Errorf("took %v, a good part of the connect timeout", took)
			}
			a := res.Report.Attempts
			if res.Name != negotiate.SSE || len(a) != 2 || a[0].Request != tc.request || a[0].Status != 200 ||
				!strings.Contains(a[0].Decision, "endpoint event") || !strings.Contains(a[0].Decision, "trying HTTP+SSE") ||
				a[1].Transport != negotiate.SSE || a[1].Error != "" {
				t.Fatalf("report:\n%s", res.Report)
			}
		})
	}
}

// Held to Streamable HTTP, the ladder stops at the endpoint event, at once,
// and says so.
func TestEndpointEventOnPostStreamableOnly(t *testing.T) {
	srv := testservers.StartLegacy(testservers.LegacyOptions{StreamOnPost: true})
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := ladder.Connect(ctx, srv.URL, dualHello(), ladder.Config{Policy: negotiate.StreamableOnly})
	var negErr *negotiate.Error
	if !errors.As(err, &negErr) || ctx.Err() != nil || len(negErr.Report.Attempts) != 2 ||
		!strings.Contains(negErr.Report.Attempts[1].Decision, "endpoint event") ||
		!strings.Contains(negErr.Report.Attempts[1].Decision, "Streamable HTTP only: stopping") {
		t.Fatalf("%v (%v)", err, ctx.Err())
	}
}

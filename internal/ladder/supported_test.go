package ladder_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/ladder"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/negotiate"
)

// unsupportedThenDiscover answers the first POST with -32022 listing
// supported (in a 200 body, where nothing cuts the list short), and every
// later one with a DiscoverResult for 2026-07-28.
func unsupportedThenDiscover(supported []string) http.HandlerFunc {
	list, _ := json.Marshal(supported)
	var n atomic.Int32
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m, err := jsonrpc.DecodeMessage(body)
		if err != nil || r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if n.Add(1) == 1 {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":%s,"requested":"x"}}}`, m.ID.Raw(), list)
			return
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{}}}`, m.ID.Raw())
	}
}

// The revisions a server lists in -32022 reach the report and the errors
// bounded and quoted: a few of them, then how many more, each unusual
// one quoted, where the whole list went into the report's decision
// (kept by the Conn for its life, printed by mcpcall probe) and the
// NewerServerError's text: a list of megabytes made a decision of
// megabytes, and a revision holding terminal escapes or newlines was
// printed as it came.
func TestSupportedListBounded(t *testing.T) {
	huge := make([]string, 50000)
	for i := range huge {
		huge[i] = fmt.Sprintf("2030-01-%06d", i)
	}
	huge[len(huge)-1] = "2026-07-28"
	hostile := []string{"\x1b[2J\x1b[31mEVIL", "line\nbreak", strings.Repeat("x", 5000), "2026-07-28"}
	for name, supported := range map[string][]string{"huge": huge, "hostile": hostile} {
		t.Run(name, func(t *testing.T) {
			ts := httptest.NewServer(unsupportedThenDiscover(supported))
			defer ts.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res, err := ladder.Connect(ctx, ts.URL, dualHello(), ladder.Config{})
			if err != nil {
				t.Fatal(err)
			}
			defer res.Transport.Close()
			d := res.Report.Attempts[0].Decision
			if len(d) > 1024 || strings.ContainsAny(d, "\x1b\n") {
				t.Errorf("decision of %d bytes: %.300q", len(d), d)
			}
			if text := res.Report.String(); strings.Contains(text, "\x1b") || len(text) > 4096 {
				t.Errorf("report text of %d bytes: %.300q", len(text), text)
			}
			if !strings.Contains(d, "2026-07-28") && name == "hostile" {
				t.Errorf("decision %q does not name the revision chosen", d)
			}
		})
	}
	// None of them ours: the error names some, bounded.
	huge[len(huge)-1] = "2030-12-31"
	ts := httptest.NewServer(unsupportedThenDiscover(huge))
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := ladder.Connect(ctx, ts.URL, dualHello(), ladder.Config{Era: negotiate.StatelessOnly})
	var newer *negotiate.NewerServerError
	if !errors.As(err, &newer) {
		t.Fatalf("err = %.300v, want a *NewerServerError", err)
	}
	if s := err.Error(); len(s) > 2048 || !strings.Contains(s, "more") {
		t.Errorf("error of %d bytes: %.300q", len(s), s)
	}
	if len(newer.Supported) != len(huge) {
		t.Errorf("Supported holds %d revisions, want all %d", len(newer.Supported), len(huge))
	}
}

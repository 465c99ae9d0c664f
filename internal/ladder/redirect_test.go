package ladder_test

import (
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/anymcp/anymcp/httpopt"
	"github.com/anymcp/anymcp/internal/ladder"
	"github.com/anymcp/anymcp/internal/redirecttest"
	"github.com/anymcp/anymcp/negotiate"
)

// TestRedirectLadder: a redirect to another origin on either rung — the
// POST of initialize, or the GET of the HTTP+SSE fallback after a 405 —
// stops the ladder with a *jsonrpc.RedirectError; it is not a reason to
// fall back, and nothing reaches the other origin.
func TestRedirectLadder(t *testing.T) {
	for _, rung := range []struct {
		name     string
		redirect string // the HTTP method answered with the redirect
		attempts int
		gets     int64
	}{
		{"POST initialize", http.MethodPost, 1, 0},
		{"fallback GET", http.MethodGet, 2, 1},
	} {
		for _, c := range redirecttest.Cases() {
			t.Run(rung.name+"/"+c.Name(), func(t *testing.T) {
				var gets atomic.Int64
				var s *redirecttest.Server
				s = redirecttest.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					io.Copy(io.Discard, r.Body)
					if r.Method == http.MethodGet {
						gets.Add(1)
					}
					if r.Method == rung.redirect {
						s.Redirect(w, c, "/mcp")
						return
					}
					w.WriteHeader(http.StatusMethodNotAllowed)
				}))
				_, err := connect(t, s.URL+"/mcp", ladder.Config{
					Common: httpopt.Common{Header: http.Header{"Authorization": {"Bearer s3cret"}, "X-Custom": {"private"}}},
				})
				redirecttest.Refused(t, err, c, rung.redirect)
				var ne *negotiate.Error
				if !errors.As(err, &ne) || len(ne.Report.Attempts) != rung.attempts {
					t.Fatalf("err = %v, want a *negotiate.Error after %d attempts", err, rung.attempts)
				}
				if a := ne.Report.Attempts[rung.attempts-1]; a.Status != c.Status {
					t.Errorf("the report shows status %d for the redirected attempt, want %d", a.Status, c.Status)
				}
				if n := gets.Load(); n != rung.gets {
					t.Errorf("%d GETs, want %d", n, rung.gets)
				}
				s.Untouched(t)
			})
		}
	}
}

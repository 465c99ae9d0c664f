package ladder_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/internal/ladder"
	"github.com/anymcp/anymcp/testservers"
)

// TestErrorSaysWhy: the error of a failed negotiation carries, without
// the report, why each attempt failed when its status does not say it —
// an endpoint on another origin, an answer that does not decode — and
// what the server said with a status that stopped the ladder; two POSTs
// to one URL are told apart by their request.
func TestErrorSaysWhy(t *testing.T) {
	cross := testservers.StartLegacy(testservers.LegacyOptions{Endpoint: testservers.EndpointCrossOrigin})
	defer cross.Close()
	deep := testservers.StartStatus(testservers.StatusOptions{PostStatus: http.StatusOK, PostContentType: "application/json",
		PostBody: `{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`})
	defer deep.Close()
	down := testservers.StartStatus(testservers.StatusOptions{PostStatus: http.StatusServiceUnavailable, PostBody: "database down"})
	defer down.Close()
	tests := []struct {
		name, url string
		want      []string
	}{
		{"cross-origin endpoint", cross.URL, []string{"GET " + cross.URL + " → 200: endpoint ", " is on another origin than the SSE URL " + cross.URL + ": refused"}},
		{"too deep", deep.URL, []string{"POST " + deep.URL + " → 200: ", "exceeded max depth"}},
		{"503 with a reason", down.URL, []string{"POST " + down.URL + " (initialize) → 503: database down"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := connect(t, tt.url, ladder.Config{})
			if err == nil {
				t.Fatal("connected")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if strings.Count(err.Error(), "GET "+tt.url) > 1 {
				t.Errorf("the error names the GET twice:\n%v", err)
			}
		})
	}
}

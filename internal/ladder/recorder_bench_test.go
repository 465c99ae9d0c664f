package ladder

import (
	"net/http"
	"testing"
)

// cannedTransport answers every request with the same response, doing
// nothing else: what is left to time is the RoundTripper chain above it.
type cannedTransport struct{ resp *http.Response }

func (c cannedTransport) RoundTrip(*http.Request) (*http.Response, error) { return c.resp, nil }

// BenchmarkRecorder is what the negotiation's recorder costs a request
// after the negotiation, when it only passes requests through: "direct"
// is the transport alone, "recorder" the same behind a recorder that no
// longer records.
func BenchmarkRecorder(b *testing.B) {
	base := cannedTransport{&http.Response{StatusCode: http.StatusOK}}
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
	if err != nil {
		b.Fatal(err)
	}
	hc, rec := recordingClient(&http.Client{Transport: base})
	rec.active.Store(false) // as after the hand-off
	for _, bc := range []struct {
		name string
		rt   http.RoundTripper
	}{{"direct", base}, {"recorder", hc.Transport}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.rt.RoundTrip(req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

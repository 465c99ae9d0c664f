package retry

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-retryablehttp"
)

// TestSenderAsRetrying: everything Retrying promises (what is sent again,
// after what wait, what is given up with which error, what is never sent
// again, refused connections, BeforeResend) holds for a Sender too.
func TestSenderAsRetrying(t *testing.T) {
	viaSender = true
	defer func() { viaSender = false }()
	t.Run("SendsAgain", TestRetryingSendsAgain)
	t.Run("GivesUp", TestRetryingGivesUp)
	t.Run("NeverAgain", TestRetryingNeverAgain)
	t.Run("ConnectionRefused", TestRetryingConnectionRefused)
	t.Run("BeforeResend", TestRetryingBeforeResend)
	t.Run("ErrorsRedacted", TestRetryingErrorsRedacted)
	t.Run("Redact", TestRetryingRedact)
}

// When nothing goes wrong, a Sender is one plain round trip: the request
// goes out as the caller built it (no copy), its answer comes back as is.
func TestSenderPlainPath(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	var seen *http.Request
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		seen = r
		return http.DefaultTransport.RoundTrip(r)
	})}
	s := NewSender(fast, hc, nil)
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL, strings.NewReader("x"))
	resp, err := s.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if seen != req || hits.Load() != 1 || resp.Request != req {
		t.Errorf("the request was copied or sent twice: seen %p, sent %p, hits %d", seen, req, hits.Load())
	}
}

// A request whose body cannot be read again (no GetBody) is not sent
// again: the first attempt read it, and a resend would carry other bytes
// (none). The answer the retrying client would have waited out comes
// back as is, and the server got the body once, whole.
func TestSenderBodyNotReplayable(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		srv := newServer(t, answer(status, "Retry-After", "0"), answer(http.StatusOK))
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pay"}}`
		req, err := http.NewRequest(http.MethodPost, srv.URL, io.MultiReader(strings.NewReader(body)))
		if err != nil {
			t.Fatal(err)
		}
		if req.GetBody != nil {
			t.Fatal("the request's body is replayable; the test shows nothing")
		}
		resp, err := NewSender(fast, nil, nil).Do(req)
		if err != nil {
			t.Fatalf("%d: Do: %v", status, err)
		}
		drainClose(resp)
		if hits := srv.hits(); resp.StatusCode != status || len(hits) != 1 || hits[0] != body {
			t.Errorf("%d: got %d; the server got %q, want the body once", status, resp.StatusCode, hits)
		}
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// BenchmarkSend compares one POST through the Retrying client and through
// a Sender, when the server simply answers.
func BenchmarkSend(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
	defer srv.Close()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`)
	b.Run("retrying", func(b *testing.B) {
		c := Retrying(fast, nil, nil)
		b.ReportAllocs()
		for b.Loop() {
			req, _ := retryablehttpRequest(srv.URL, body)
			resp, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			drainClose(resp)
		}
	})
	b.Run("sender", func(b *testing.B) {
		s := NewSender(fast, nil, nil)
		b.ReportAllocs()
		for b.Loop() {
			req, _ := http.NewRequest(http.MethodPost, srv.URL, bytesReader(body))
			resp, err := s.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			drainClose(resp)
		}
	})
}

func retryablehttpRequest(url string, body []byte) (*retryablehttp.Request, error) {
	return retryablehttp.NewRequest(http.MethodPost, url, body)
}

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

func drainClose(resp *http.Response) {
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

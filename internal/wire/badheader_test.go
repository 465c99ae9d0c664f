package wire

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// reauth is an authorizing RoundTripper as package auth's is: a 401 makes
// it send the request again, with a body from GetBody and a new
// Authorization header — here one with a CR LF, which net/http refuses
// before writing a byte.
type reauth struct{ base http.RoundTripper }

func (r reauth) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.base.RoundTrip(req.Clone(req.Context()))
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return resp, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	again := req.Clone(req.Context())
	if again.Body, err = req.GetBody(); err != nil {
		return nil, err
	}
	again.Header.Set("Authorization", "Bearer at\r\nX-Injected: 1")
	return r.base.RoundTrip(again)
}

// A request that net/http refuses for a header field value it cannot
// carry (a token with CR LF) was not sent, also when an earlier attempt
// went out in full and was refused: the caller may say so, and send it
// again once the header is fixed.
func TestDeliveryBadHeaderNotSent(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	for _, first := range []bool{true, false} {
		req, d, err := NewPost(context.Background(), http.MethodPost, srv.URL, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		var rt http.RoundTripper = reauth{base: srv.Client().Transport}
		if !first {
			req.Header.Set("Authorization", "Bearer at\r\nX-Injected: 1")
			rt = srv.Client().Transport
		}
		if _, err := (&http.Client{Transport: rt}).Do(req); err == nil || d.Sent() {
			t.Fatalf("after a refused attempt %v: err %v, sent %v; want an error, not sent", first, err, d.Sent())
		}
	}
}

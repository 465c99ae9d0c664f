package retry_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/anymcp/anymcp/internal/retry"
	"github.com/anymcp/anymcp/reconnect"
)

// A server that answers 429 with Retry-After: 0 gets the same request
// again; one that answers 500 would not.
func ExampleRetrying() {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		io.Copy(w, r.Body) // echo
	}))
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()

	client := retry.Retrying(reconnect.Policy{MaxAttempts: 3}, &http.Client{Transport: tr}, nil)
	req, err := retryablehttp.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL,
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		panic(err)
	}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, hits.Load(), string(body))
	// Output: 200 2 {"jsonrpc":"2.0","id":1,"method":"ping"}
}

func ExampleParseRetryAfter() {
	now := time.Date(1994, time.November, 6, 8, 49, 0, 0, time.UTC)
	for _, v := range []string{"120", "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "yesterday"} {
		d, ok := retry.ParseRetryAfter(v, now)
		fmt.Println(d, ok)
	}
	// Output:
	// 2m0s true
	// 37s true
	// 37s true
	// 37s true
	// 0s false
}

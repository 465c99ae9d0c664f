package wire

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/anymcp/anymcp/jsonrpc"
)

// Delivery says sent once net/http wrote the whole request, and speaks of
// the latest attempt: a refused connection is not sent; a request the
// server read whole and then dropped is, and gets no body for another
// attempt; a new attempt (after an answer) starts unsent.
func TestDeliverySpeaksOfTheLatestAttempt(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	read := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		read <- struct{}{}
		panic(http.ErrAbortHandler) // the connection drops: no answer
	}))
	defer srv.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	refused := closed.URL
	closed.Close()

	ctx := context.Background()
	req, d, err := NewPost(ctx, http.MethodPost, refused+"/mcp", body)
	if err != nil {
		t.Fatal(err)
	}
	if req.ContentLength != int64(len(body)) || req.GetBody == nil {
		t.Fatalf("ContentLength %d, GetBody set %v", req.ContentLength, req.GetBody != nil)
	}
	if _, err := srv.Client().Do(req); err == nil || d.Sent() {
		t.Fatalf("a refused connection: err %v, sent %v; want an error, not sent", err, d.Sent())
	}

	req, d, _ = NewPost(ctx, http.MethodPost, srv.URL+"/mcp", body)
	if _, err := srv.Client().Do(req); err == nil || !d.Sent() {
		t.Fatalf("a request read whole, then dropped: err %v, sent %v; want an error, sent", err, d.Sent())
	}
	<-read
	if _, err := req.GetBody(); !errors.Is(err, ErrUnansweredResend) || !d.Sent() {
		t.Fatalf("a body for another attempt of a request read whole and not answered: err %v, sent %v; want ErrUnansweredResend, sent", err, d.Sent())
	}
	d.attempt("") // the next attempt asks for a connection
	if d.Sent() {
		t.Fatal("a new attempt began: not sent until it is written")
	}

	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer busy.Close()
	req, d, _ = NewPost(ctx, http.MethodPost, busy.URL+"/mcp", body)
	if resp, err := busy.Client().Do(req); err != nil || !d.Sent() {
		t.Fatalf("a request answered 429: err %v, sent %v; want an answer, sent", err, d.Sent())
	} else {
		resp.Body.Close()
	}
	if next, err := req.GetBody(); err != nil || d.Sent() {
		t.Fatalf("a body taken for the next attempt: err %v, sent %v; want not sent", err, d.Sent())
	} else if b, _ := io.ReadAll(next); string(b) != string(body) {
		t.Fatalf("GetBody gave %q", b)
	}
}

func TestMayHaveRunKeepsTheError(t *testing.T) {
	err := MayHaveRun(context.DeadlineExceeded)
	if !errors.Is(err, jsonrpc.ErrOutcomeUnknown) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v: want it to match ErrOutcomeUnknown and context.DeadlineExceeded", err)
	}
	if MayHaveRun(err) != err || MayHaveRun(nil) != nil {
		t.Fatal("an error that already matches, or nil, is returned as is")
	}
}

package legacy_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"time"

	"github.com/anymcp/anymcp/httpopt"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/legacy"
	"github.com/anymcp/anymcp/reconnect"
)

// A minimal HTTP+SSE session: Dial opens the stream and learns the
// endpoint, Send POSTs a request there, and its response arrives through
// Recv from the stream. A real host runs Recv in its own loop; the client
// package does all of this for it.
func Example() {
	out := make(chan string, 16) // what the server sends on the stream
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: endpoint\ndata: /messages?sessionId=42\n\n")
			w.(http.Flusher).Flush()
			for {
				select {
				case msg := <-out:
					fmt.Fprintf(w, "event: message\ndata: %s\n\n", msg)
					w.(http.Flusher).Flush()
				case <-r.Context().Done():
					return
				}
			}
		case http.MethodPost:
			body, _ := io.ReadAll(r.Body)
			m, err := jsonrpc.DecodeMessage(body)
			if err != nil {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			if m.IsRequest() {
				out <- fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2024-11-05"}}`, m.ID)
			}
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	t, err := legacy.Dial(ctx, srv.URL+"/sse", legacy.Options{})
	if err != nil {
		panic(err)
	}
	defer t.Close()
	fmt.Println(strings.TrimPrefix(t.Endpoint(), srv.URL))

	err = t.Send(ctx, &jsonrpc.Message{ID: jsonrpc.Int(1), Method: "initialize", Params: []byte(`{}`)})
	if err != nil {
		panic(err)
	}
	resp, err := t.Recv()
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.ID, string(resp.Result))
	// Output:
	// /messages?sessionId=42
	// 1 {"protocolVersion":"2024-11-05"}
}

// When the stream drops, the transport opens a new one by itself. Recv
// says the session was lost; the next session starts with initialize,
// which waits for the new stream's endpoint and is sent there.
func Example_reconnect() {
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			n := gets.Add(1)
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: endpoint\ndata: /messages?sessionId=%d\n\n", n)
			w.(http.Flusher).Flush()
			if n == 1 {
				return // the first stream drops at once
			}
			<-r.Context().Done()
		case http.MethodPost:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	policy := reconnect.Policy{InitialDelay: 10 * time.Millisecond}
	t, err := legacy.Dial(ctx, srv.URL+"/sse", legacy.Options{Common: httpopt.Common{Reconnect: &policy}})
	if err != nil {
		panic(err)
	}
	defer t.Close()

	_, err = t.Recv()
	var lost *jsonrpc.SessionLostError
	fmt.Println("session lost:", errors.As(err, &lost), errors.Is(err, legacy.ErrConnectionLost))

	err = t.Send(ctx, &jsonrpc.Message{ID: jsonrpc.Int(2), Method: "tools/list"})
	fmt.Println("before initialize:", errors.Is(err, jsonrpc.ErrSessionExpired))

	err = t.Send(ctx, &jsonrpc.Message{ID: jsonrpc.Int(3), Method: "initialize", Params: []byte(`{}`)})
	fmt.Println("initialize:", err, strings.TrimPrefix(t.Endpoint(), srv.URL))
	// Output:
	// session lost: true true
	// before initialize: true
	// initialize: <nil> /messages?sessionId=2
}

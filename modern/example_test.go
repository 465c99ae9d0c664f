package modern_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/modern"
)

// A minimal exchange: initialize, then notifications/initialized, with the
// server's answers read by Recv. A real host runs Recv in its own loop; the
// client package does all of this for it.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m, err := jsonrpc.DecodeMessage(body)
		switch {
		case r.Method != http.MethodPost:
			w.WriteHeader(http.StatusMethodNotAllowed) // no GET stream, no DELETE
		case err != nil:
			w.WriteHeader(http.StatusBadRequest)
		case m.IsRequest():
			w.Header().Set("Mcp-Session-Id", "session-1")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25"}}`, m.ID)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer srv.Close()

	t, err := modern.New(srv.URL, modern.Options{})
	if err != nil {
		panic(err)
	}
	defer t.Close()

	ctx := context.Background()
	err = t.Send(ctx, &jsonrpc.Message{ID: jsonrpc.Int(1), Method: "initialize", Params: []byte(`{}`)})
	if err != nil {
		panic(err)
	}
	resp, _ := t.Recv()
	fmt.Println(string(resp.Result))
	fmt.Println(t.SessionID(), t.ProtocolVersion())

	if err := t.Send(ctx, &jsonrpc.Message{Method: "notifications/initialized"}); err != nil {
		panic(err)
	}
	// Output:
	// {"protocolVersion":"2025-11-25"}
	// session-1 2025-11-25
}

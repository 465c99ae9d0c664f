package testservers_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/anymcp/anymcp/testservers"
)

// A stdio server fed one line, answering on another.
func ExampleServeStdio() {
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}` + "\n")
	var out bytes.Buffer
	if err := testservers.ServeStdio(context.Background(), in, &out, testservers.Options{}); err != nil {
		fmt.Println(err)
	}
	fmt.Print(out.String())
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}
}

// A Streamable HTTP server answering initialize with one JSON body.
func ExampleStartStreamable() {
	srv := testservers.StartStreamable(testservers.HTTPOptions{JSONResponse: true})
	defer srv.Close()

	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}`))
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	defer resp.Body.Close()
	var answer struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
			ServerInfo      struct {
				Name string `json:"name"`
			} `json:"serverInfo"`
		} `json:"result"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&answer)
	fmt.Println(resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get(testservers.HeaderSessionID) != "")
	fmt.Println(answer.Result.ProtocolVersion, answer.Result.ServerInfo.Name)
	// Output:
	// 200 application/json true
	// 2025-06-18 anymcp-testserver
}

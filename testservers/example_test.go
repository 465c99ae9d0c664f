package testservers_test

import (
	"bufio"
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

// An HTTP+SSE (2024-11-05) server: the GET stream names the endpoint to
// POST to, and the answer comes back on the stream.
func ExampleStartLegacy() {
	srv := testservers.StartLegacy(testservers.LegacyOptions{})
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}

	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	stream, err := hc.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	defer stream.Body.Close()
	events := bufio.NewScanner(stream.Body)
	next := func() (event, data string) { // one event of one data line
		for events.Scan() {
			line := events.Text()
			if v, ok := strings.CutPrefix(line, "event: "); ok {
				event = v
			} else if v, ok := strings.CutPrefix(line, "data: "); ok {
				data = v
			} else if line == "" && event != "" {
				return event, data
			}
		}
		return "", ""
	}
	_, endpoint := next()
	fmt.Println("endpoint", strings.Split(endpoint, "=")[0]+"=…")

	post, err := hc.Post(strings.TrimSuffix(srv.URL, "/sse")+endpoint, "application/json", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}`))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	post.Body.Close()
	fmt.Println("POST", post.StatusCode)
	event, data := next()
	fmt.Println(event, strings.Contains(data, `"protocolVersion":"2024-11-05"`))
	// Output:
	// endpoint /message?sessionId=…
	// POST 202
	// message true
}

// A server that answers the first tools/call 429 (the core never sees
// it) and expires every session on its third request.
func ExampleFaults() {
	srv := testservers.StartStreamable(testservers.HTTPOptions{JSONResponse: true, Faults: testservers.Faults{Rules: []testservers.FaultRule{
		{Fault: testservers.FaultTooManyRequests, Method: "tools/call", Count: 1, RetryAfter: "1"},
		{Fault: testservers.FaultExpireSession, Skip: 2, Count: 1, PerSession: true},
	}}})
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	session := ""
	post := func(body string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		if session != "" {
			req.Header.Set(testservers.HeaderSessionID, session)
		}
		resp, err := (&http.Client{Transport: tr}).Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		if id := resp.Header.Get(testservers.HeaderSessionID); id != "" {
			session = id
		}
		fmt.Println(strings.TrimSpace(fmt.Sprint(resp.StatusCode, " ", resp.Header.Get("Retry-After"))))
	}
	post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}`)
	for range 3 {
		post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"counter"}}`)
	}
	st := srv.Server().Stats()
	fmt.Println(st.Counter, st.Rejected, st.SessionsExpired, st.Faults)
	// Output:
	// 200
	// 429 1
	// 200
	// 404
	// 1 1 1 map[429:1 expire-session:1]
}

// A stateless-only server answering a 2026-07-28 request: every request
// carries its version and client capabilities in _meta, and mirrors its
// method and name into headers.
func ExampleStartStateless() {
	srv := testservers.StartStateless(testservers.HTTPOptions{JSONResponse: true})
	defer srv.Close()

	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},`+
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`))
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(testservers.HeaderProtocolVersion, "2026-07-28")
	req.Header.Set(testservers.HeaderMethod, "tools/call")
	req.Header.Set(testservers.HeaderName, testservers.EncodeHeaderValue("echo"))
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
			ResultType string `json:"resultType"`
			Content    []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&answer)
	fmt.Println(resp.StatusCode, answer.Result.ResultType, answer.Result.Content[0].Text)
	// Output:
	// 200 complete hi
}

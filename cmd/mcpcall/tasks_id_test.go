package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// hostileTaskID has terminal escapes (a colour, a window title ended by a
// bell) and shell syntax.
const hostileTaskID = "x'; touch pwned \x1b[31m\x1b]0;owned\x07"

// taskIDServer is a bare 2026-07-28 server (JSON answers) whose tool job
// becomes a task with the id hostileTaskID and a status message with
// escapes too. Its first tasks/get is answered only when the client gives
// up on it; later ones say the task works.
func taskIDServer(t *testing.T) string {
	var polls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		if json.Unmarshal(body, &msg) != nil || msg.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		id, _ := json.Marshal(hostileTaskID)
		task := `"taskId":` + string(id) + `,"status":"working","statusMessage":"busy \u001b[2J","createdAt":"a","lastUpdatedAt":"a","ttlMs":60000,"pollIntervalMs":1`
		answer := `"error":{"code":-32601,"message":"method not found"}`
		switch msg.Method {
		case "server/discover":
			answer = `"result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"extensions":{"io.modelcontextprotocol/tasks":{}}},"serverInfo":{"name":"raw","version":"1"}}`
		case "tools/list":
			answer = `"result":{"resultType":"complete","tools":[{"name":"job","inputSchema":{"type":"object"}}]}`
		case "tools/call":
			answer = `"result":{"resultType":"task",` + task + `}`
		case "tasks/get":
			if polls.Add(1) == 1 {
				<-r.Context().Done() // the client gives up (--timeout)
				return
			}
			answer = `"result":{"resultType":"complete",` + task + `}`
		case "tasks/cancel":
			answer = `"result":{"resultType":"complete"}`
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,`+answer+`}`) //nolint:errcheck // the client reports a short answer
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// A task's id, status and status message are the server's: mcpcall
// writes none of their control characters to the terminal, and the
// command it suggests to wait for the task again takes the id as one
// word of the shell, whatever is in it.
func TestTaskIDShownSafely(t *testing.T) {
	url := taskIDServer(t)
	r := newRunner(t)
	res := r.run("tools", "call", "--timeout", "500ms", "job", url)
	if res.code != exitTimeout {
		t.Fatalf("exit %d, want %d; stderr %q", res.code, exitTimeout, res.stderr)
	}
	if strings.ContainsAny(res.stderr, "\x1b\x07") {
		t.Errorf("stderr has control characters of the server's: %q", res.stderr)
	}
	if want := `mcpcall tasks result $'x\'; touch pwned \x1b[31m\x1b]0;owned\x07' TARGET`; !strings.Contains(res.stderr, want) {
		t.Errorf("stderr %q does not suggest %s", res.stderr, want)
	}
	res = r.runOK("tasks", "get", hostileTaskID, url)
	if strings.ContainsAny(res.stdout, "\x1b\x07") {
		t.Errorf("tasks get: stdout has control characters of the server's: %q", res.stdout)
	}
}

// taskWord makes any task id one word of a POSIX shell, and keeps control
// characters off the terminal.
func TestTaskWord(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"786512e2-9e0d-44bd-8f29-789f320fe840", "786512e2-9e0d-44bd-8f29-789f320fe840"},
		{"a b; rm -rf ~", `'a b; rm -rf ~'`},
		{"it's", `'it'\''s'`},
		{"tab\there", `$'tab\x09here'`},
		{"\\ \u202e \xff", `$'\\ \xe2\x80\xae \xff'`},
	} {
		if got := taskWord(tc.id); got != tc.want {
			t.Errorf("taskWord(%q) = %s, want %s", tc.id, got, tc.want)
		}
	}
}

package client

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// taskScript is a legacy (2025-11-25) server inside the instant transport
// whose tools/call of "job" runs as a task: it is working for polls
// tasks/get, then completed. It records the methods it saw, in order.
type taskScript struct {
	mu       sync.Mutex
	seen     []string
	polls    int // tasks/get answered working before completed
	asked    json.RawMessage
	required bool // job's taskSupport is "required" (else "optional")
}

func (s *taskScript) result(m *jsonrpc.Message) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, m.Method)
	support := "optional"
	if s.required {
		support = "required"
	}
	switch m.Method {
	case "initialize":
		return json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}}},"serverInfo":{"name":"tasks","version":"1"}}`)
	case "tools/list":
		return json.RawMessage(`{"tools":[{"name":"job","inputSchema":{"type":"object"},"execution":{"taskSupport":"` + support + `"}}]}`)
	case "tools/call":
		var p struct {
			Task json.RawMessage `json:"task"`
		}
		_ = json.Unmarshal(m.Params, &p)
		s.asked = p.Task
		if p.Task == nil {
			return json.RawMessage(`{"content":[{"type":"text","text":"plain"}]}`)
		}
		return json.RawMessage(`{"task":{"taskId":"t1","status":"working","createdAt":"now","lastUpdatedAt":"now","ttl":null,"pollInterval":1}}`)
	case "tasks/get":
		status := "working"
		if s.polls == 0 {
			status = "completed"
		} else {
			s.polls--
		}
		return json.RawMessage(fmt.Sprintf(`{"taskId":"t1","status":%q,"createdAt":"now","lastUpdatedAt":"now","ttl":null,"pollInterval":1}`, status))
	case "tasks/result":
		return json.RawMessage(`{"content":[{"type":"text","text":"done"}],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t1"}}}`)
	}
	return nil
}

// fail refuses a plain call of a job that must run as a task, as
// 2025-11-25 has it (-32601).
func (s *taskScript) fail(m *jsonrpc.Message) *jsonrpc.Error {
	if m.Method != "tools/call" || !s.required || strings.Contains(string(m.Params), `"task"`) {
		return nil
	}
	s.mu.Lock()
	s.seen = append(s.seen, m.Method)
	s.mu.Unlock()
	return jsonrpc.NewError(jsonrpc.CodeMethodNotFound, "tool job requires task augmentation")
}

func (s *taskScript) methods() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.seen, " ")
}

func TestTaskFlowLegacy(t *testing.T) {
	for _, tc := range []struct {
		name     string
		required bool
		listed   bool
		asTask   bool
		want     string // the methods after initialize
		text     string
	}{
		{"required, listed", true, true, false, "tools/list tools/call tasks/get tasks/get tasks/get tasks/result", "done"},
		{"required, not listed", true, false, false, "tools/call tools/list tools/call tasks/get tasks/get tasks/get tasks/result", "done"},
		{"optional, plain", false, true, false, "tools/list tools/call", "plain"},
		{"optional, AsTask", false, true, true, "tools/list tools/call tasks/get tasks/get tasks/get tasks/result", "done"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &taskScript{polls: 2, required: tc.required}
			srv := newInstantTransport()
			srv.result = s.result
			srv.fail = s.fail
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := Open(ctx, srv, WithTaskPolicy(TaskPolicy{MinPoll: time.Millisecond}))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if tc.listed {
				if _, err := c.AllTools(ctx); err != nil {
					t.Fatal(err)
				}
			}
			var statuses []mcp.TaskStatus
			opts := []CallOption{OnTask(func(t mcp.Task) { statuses = append(statuses, t.Status) })}
			if tc.asTask {
				opts = append(opts, AsTask())
			}
			res, err := c.CallTool(ctx, "job", nil, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Content[0].Text; got != tc.text {
				t.Errorf("result %q, want %q", got, tc.text)
			}
			if got := s.methods(); !strings.HasSuffix(got, tc.want) {
				t.Errorf("methods %q, want them to end with %q", got, tc.want)
			}
			if tc.text == "done" && fmt.Sprint(statuses) != "[working completed]" {
				t.Errorf("OnTask saw %v", statuses)
			}
		})
	}
}

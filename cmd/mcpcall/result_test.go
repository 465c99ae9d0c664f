package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestUndecodableResult: a tool that ran and answered with a result that
// does not decode as a CallToolResult (an annotation of the wrong type) is
// not a connection failure, which scripts retry, running the tool again:
// mcpcall prints what came back (as received with --json; in text, the
// blocks that decode as usual and the others as JSON) and exits 5, saying
// the tool ran. It printed nothing and exited 4.
func TestUndecodableResult(t *testing.T) {
	const result = `{"content":[{"type":"text","text":"paid 10 EUR, receipt 4711","annotations":{"priority":"high"}},{"type":"text","text":"thank you"}],"structuredContent":{"receipt":4711}}`
	url, calls := rawServer(t, `[{"name":"pay","inputSchema":{"type":"object","properties":{"amount":{"type":"number"}}}}]`, result)

	res := newRunner(t).run("tools", "call", "pay", "amount=10", url)
	wantOut := `{
  "type": "text",
  "text": "paid 10 EUR, receipt 4711",
  "annotations": {
    "priority": "high"
  }
}
thank you
{
  "receipt": 4711
}
`
	if res.code != exitRPC || res.stdout != wantOut || !strings.Contains(res.stderr, "tool pay ran, but its result is not a valid tools/call result") {
		t.Errorf("text: exit %d, want %d\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", res.code, exitRPC, res.stdout, wantOut, res.stderr)
	}

	res = newRunner(t).run("tools", "call", "pay", "amount=10", "--json", url)
	var got struct {
		Content []json.RawMessage `json:"content"`
		Meta    *meta             `json:"meta"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &got); err != nil || len(got.Content) != 2 || got.Meta == nil {
		t.Errorf("--json: stdout is not the result with meta (%v):\n%s", err, res.stdout)
	}
	var line errorLine
	if err := json.Unmarshal([]byte(res.stderr), &line); err != nil || res.code != exitRPC || line.Error.Kind != kindRPC || !strings.Contains(line.Error.Message, "tool pay ran") {
		t.Errorf("--json: exit %d, want %d, and an rpc error line saying the tool ran (%v):\n%s", res.code, exitRPC, err, res.stderr)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("the tool ran %d times, want 2 (once a run)", n)
	}
}

// TestUndecodableListing: a tools/list answer whose tool has a field of the
// wrong type exits 5 (the server answered, and the request ran), not 4, a
// connection failure that scripts try again.
func TestUndecodableListing(t *testing.T) {
	url, _ := rawServer(t, `[{"name":"look","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":"yes"}}]`, `{}`)
	res := newRunner(t).run("tools", "list", url)
	if res.code != exitRPC || !strings.Contains(res.stderr, "tools/list: decoding result") {
		t.Errorf("exit %d, want %d, with the decoding error\nstderr:\n%s", res.code, exitRPC, res.stderr)
	}
}

// TestStructuredContentOnce: in text output, structuredContent is printed
// after the content blocks only when no text block already carries it, so
// that the results of server-memory (the text is the JSON of
// structuredContent, indented) and server-filesystem (structuredContent
// wraps the text: {"content": text}) are shown once; a text that says
// something else is followed by structuredContent.
func TestStructuredContentOnce(t *testing.T) {
	const tools = `[{"name":"t","inputSchema":{"type":"object"}}]`
	for _, tc := range []struct{ name, result, want string }{
		{"memory: the text is its JSON",
			`{"content":[{"type":"text","text":"{\n  \"entities\": [\n    {\"name\": \"a\", \"n\": 1.0}\n  ]\n}"}],"structuredContent":{"entities":[{"n":1,"name":"a"}]}}`,
			"{\n  \"entities\": [\n    {\"name\": \"a\", \"n\": 1.0}\n  ]\n}\n"},
		{"filesystem: it wraps the text",
			`{"content":[{"type":"text","text":"line 1\nline 2\n"}],"structuredContent":{"content":"line 1\nline 2\n"}}`,
			"line 1\nline 2\n"},
		{"a wrapped number",
			`{"content":[{"type":"text","text":"42"}],"structuredContent":{"result":42}}`,
			"42\n"},
		{"a text that says something else",
			`{"content":[{"type":"text","text":"1+2=3"}],"structuredContent":{"sum":3}}`,
			"1+2=3\n{\n  \"sum\": 3\n}\n"},
		{"no text block",
			`{"content":[],"structuredContent":{"sum":3}}`,
			"{\n  \"sum\": 3\n}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, _ := rawServer(t, tools, tc.result)
			res := newRunner(t).runOK("tools", "call", "t", url)
			if res.stdout != tc.want {
				t.Errorf("stdout:\n%s\nwant:\n%s", res.stdout, tc.want)
			}
		})
	}
}

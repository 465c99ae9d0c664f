package client

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// A stateless result's resultType says how to read it: "complete" (or none,
// from a server of an earlier revision) is the answer, "input_required"
// asks for input, and any other value is invalid (2026-07-28, basic:
// "A resultType of any value unrecognized by the client MUST be considered
// invalid"): the call fails with a *ResultError, where it was read as a
// complete result (an empty tool result, no error) and the host took a
// task or a malformed answer for the tool's success. Only the result's own
// member counts, not one nested in its content.
func TestUnknownResultTypeIsInvalid(t *testing.T) {
	c, p := openStateless(t)
	call := func(result string) (*mcp.CallToolResult, error) {
		t.Helper()
		type answer struct {
			res *mcp.CallToolResult
			err error
		}
		ch := make(chan answer, 1)
		go func() {
			res, err := c.CallTool(context.Background(), "x", nil)
			ch <- answer{res, err}
		}()
		m := p.expect("tools/call")
		p.reply(m.ID, result)
		a := <-ch
		return a.res, a.err
	}
	for _, bad := range []string{
		`{"resultType":"task","task":{"taskId":"1"}}`,
		`{"content":[],"resultType":"Complete"}`,
		`{"resultType":5,"content":[]}`,
		`{"resultType":null,"content":[]}`,
		// input_required that does not decode as one: not a complete result either.
		`{"resultType":"input_required","requestState":5}`,
	} {
		res, err := call(bad)
		var re *ResultError
		if !errors.As(err, &re) || re.Method != "tools/call" || errors.Is(err, jsonrpc.ErrOutcomeUnknown) {
			t.Errorf("%s: result %+v, err %v; want a *ResultError", bad, res, err)
		}
	}
	for _, good := range []string{
		`{"resultType":"complete","content":[{"type":"text","text":"ok"}]}`,
		`{"content":[{"type":"text","text":"ok"}]}`,
		`{ "resultType" : "compl\u0065te" , "content":[{"type":"text","text":"ok"}]}`,
		`{"structuredContent":{"resultType":"bogus","list":["resultType"]},"content":[{"type":"text","text":"ok"}],"resultType":"complete"}`,
		`{"content":[{"type":"text","text":"ok","_meta":{"resultType":"x"}}]}`,
	} {
		res, err := call(good)
		if err != nil || len(res.Content) != 1 || res.Content[0].Text != "ok" {
			t.Errorf("%s: result %+v, err %v", good, res, err)
		}
	}
	select {
	case m := <-p.toServer:
		t.Errorf("the client sent %s after an invalid result", m.Method)
	default:
	}
}

func TestResultTypeOf(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{`{"resultType":"complete"}`, `"complete"`},
		{` { "a" : {"resultType":"no"}, "b":["resultType", {"resultType":"no"}], "resultType" : "yes\"" }`, `"yes\""`},
		{`{"a":"resultType","b":"x"}`, ``},
		{`{"a":"\\","resultType":7}`, `7`},
		{`{"resultType"`, ``},
		{`{"resultType":"unterminated`, ``},
		{`["resultType","x"]`, ``},
		{``, ``},
	} {
		got, ok := resultTypeOf([]byte(tc.raw))
		if string(got) != tc.want || ok != (tc.want != "") {
			t.Errorf("resultTypeOf(%s) = %s, %v; want %s", tc.raw, got, ok, tc.want)
		}
	}
	if _, ok := resultTypeOf([]byte(strings.Repeat(`{"a":`, 100) + `"resultType"`)); ok {
		t.Error("a nested member name taken for the result's own")
	}
}

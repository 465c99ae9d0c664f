package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// Multi round-trip requests (revision 2026-07-28): instead of sending the
// client requests of its own, a modern server answers tools/call,
// prompts/get or resources/read with an input_required result listing what
// it needs (elicitation, sampling, roots). The Conn answers each with the
// same handlers that serve a legacy server's requests (WithElicitation,
// WithSampling, WithRoots), and sends the original request again — a new
// request, with a new id — carrying the answers as inputResponses and the
// server's requestState exactly as received. A server may ask again; the
// rounds are bounded by maxInputRounds.

// maxInputRounds bounds how often one call answers input_required.
const maxInputRounds = 16

// inputMethods are the requests a server may answer with input_required.
var inputMethods = map[string]bool{"tools/call": true, "prompts/get": true, "resources/read": true}

// InputError says why a call that needed input from the client failed:
// the server asked for something the client did not declare or does not
// know, a handler failed, or the server kept asking past the bound.
type InputError struct {
	Method string // the request that needed input
	Key    string // the server's id of the input request, when one is at fault
	Input  string // its method (elicitation/create, sampling/createMessage, roots/list)
	Reason string
	Err    error // the handler's error, if that is what failed
}

func (e *InputError) Error() string {
	s := e.Method + ": input required"
	if e.Key != "" {
		s += " (" + e.Input + " " + strconv.Quote(e.Key) + ")"
	}
	s += ": " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *InputError) Unwrap() error { return e.Err }

// inputRequest reads an input_required result; ok is false for any other
// (a result without resultType is complete, whatever the era).
func (d *dialect) inputRequest(raw json.RawMessage) (*mcp.InputRequiredResult, bool) {
	if !d.inputRequired || !bytes.Contains(raw, []byte(`"input_required"`)) {
		return nil, false
	}
	var ir mcp.InputRequiredResult
	if json.Unmarshal(raw, &ir) != nil || ir.ResultType != mcp.ResultInputRequired {
		return nil, false
	}
	return &ir, true
}

// inputRound answers the input requests of ir and returns the params of
// the request to send next: the original params plus inputResponses and,
// when the server sent one, requestState.
func (c *Conn) inputRound(ctx context.Context, method string, params json.RawMessage, ir *mcp.InputRequiredResult, round int) (json.RawMessage, error) {
	switch {
	case !inputMethods[method]:
		return nil, &InputError{Method: method, Reason: "the server answered input_required, which only tools/call, prompts/get and resources/read may get"}
	case round > maxInputRounds:
		return nil, &InputError{Method: method, Reason: fmt.Sprintf("the server still asks for input after %d rounds", maxInputRounds)}
	case len(ir.InputRequests) == 0 && ir.RequestState == nil:
		return nil, &InputError{Method: method, Reason: "input_required with neither inputRequests nor requestState"}
	}
	keys := make([]string, 0, len(ir.InputRequests))
	for k := range ir.InputRequests {
		keys = append(keys, k)
	}
	slices.Sort(keys) // answered one at a time, in a stable order
	var members bytes.Buffer
	members.WriteString(`"inputResponses":{`)
	for i, k := range keys {
		req := ir.InputRequests[k]
		answer, err := c.answerInput(ctx, method, k, req)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			members.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		members.Write(kb)
		members.WriteByte(':')
		members.Write(answer)
	}
	members.WriteByte('}')
	if ir.RequestState != nil {
		sb, _ := json.Marshal(*ir.RequestState)
		members.WriteString(`,"requestState":`)
		members.Write(sb)
	}
	c.opts.logger.Debug("anymcp: answered input_required; sending the request again", "method", method, "round", round, "inputs", len(keys))
	return withoutInput(params, members.Bytes())
}

// answerInput runs the host's handler for one input request, checking first
// that the client declared the capability it needs.
func (c *Conn) answerInput(ctx context.Context, method, key string, req mcp.InputRequest) (json.RawMessage, error) {
	fail := func(reason string, err error) error {
		return &InputError{Method: method, Key: key, Input: req.Method, Reason: reason, Err: err}
	}
	o := c.opts
	switch req.Method {
	case "elicitation/create":
		if o.elicitForm == nil && o.elicitURL == nil {
			return nil, fail("the client did not declare the elicitation capability", nil)
		}
	case "sampling/createMessage":
		if o.sampling == nil {
			return nil, fail("the client did not declare the sampling capability", nil)
		}
	case "roots/list":
		if o.roots == nil {
			return nil, fail("the client did not declare the roots capability", nil)
		}
	default:
		return nil, fail("not an input request this client knows (elicitation/create, sampling/createMessage, roots/list)", nil)
	}
	result, err := c.answer(ctx, &jsonrpc.Message{Method: req.Method, Params: req.Params})
	if err != nil {
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeInvalidParams {
			return nil, fail("its params are invalid", err)
		}
		return nil, fail("the handler failed", err)
	}
	b, err := json.Marshal(result)
	if err != nil {
		return nil, fail("encoding the answer", err)
	}
	return b, nil
}

// withoutInput returns params with the members given in place of any
// inputResponses and requestState they had (the request is the original
// one, so it has none — unless the caller put some there).
func withoutInput(params json.RawMessage, members []byte) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(params)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return append(append([]byte{'{'}, members...), '}'), nil
	}
	if trimmed[0] != '{' {
		return nil, errors.New("params must be a JSON object to carry inputResponses")
	}
	if bytes.Contains(trimmed, []byte(`"inputResponses"`)) || bytes.Contains(trimmed, []byte(`"requestState"`)) {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(trimmed, &obj); err != nil {
			return nil, err
		}
		delete(obj, "inputResponses")
		delete(obj, "requestState")
		b, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		trimmed = b
	}
	return prependMembers(trimmed, nil, members, nil), nil
}

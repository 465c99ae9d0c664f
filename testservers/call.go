package testservers

import (
	"context"
	"encoding/json"

	"github.com/anymcp/anymcp/jsonrpc"
)

// call is what a tool (or a prompt, or a resource, when they need input
// from the client) sees of the request it runs in.
type call struct {
	ss            *Session
	ctx           context.Context
	id            jsonrpc.ID
	progressToken json.RawMessage // nil when the client asked for no progress
	rq            *reqInfo        // the request's era and, stateless, its _meta

	// What the request is, for the signed requestState: the method, and
	// the tool or prompt name or resource URI.
	method, name string
	// inputResponses and requestState of a stateless retry (MRTR).
	inputs   map[string]json.RawMessage
	state    string
	hasState bool
	// task is the task the call runs as, nil for a plain call: its input
	// comes as the task's era says (taskAsk).
	task *task
}

// stateless reports whether the call is served in the stateless era.
func (c *call) stateless() bool { return c.rq.era == eraStateless }

// notify sends a notification that belongs to the call, unless the call
// is cancelled: nothing more goes out for a cancelled request.
func (c *call) notify(method string, params any) error {
	if err := c.ctx.Err(); err != nil {
		return err
	}
	return c.ss.notify(c.ctx, method, params)
}

// mrtrParams are the params of a stateless retry (tools/call, prompts/get,
// resources/read) after an input_required result.
type mrtrParams struct {
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
	RequestState   *string                    `json:"requestState"`
}

// newCall returns the call of a request in the era rq says.
func (ss *Session) newCall(ctx context.Context, id jsonrpc.ID, rq *reqInfo, method, name string, p mrtrParams) *call {
	c := &call{ss: ss, ctx: ctx, id: id, rq: rq, method: method, name: name}
	if rq.era == eraStateless {
		c.inputs = p.InputResponses
		if p.RequestState != nil {
			c.state, c.hasState = *p.RequestState, true
		}
	}
	return c
}

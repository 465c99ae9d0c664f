package testservers

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// How a tool gets input from the client depends on the era of its
// request. In the initialize era it sends a request to the client
// (sampling/createMessage, elicitation/create, roots/list) and waits for
// the answer. In the stateless era (multi round-trip requests, MRTR) the
// tool runs again from the start on every retry of the client's request:
// it reads the answers from the retry's inputResponses and, while some
// are missing, ends with an input_required result that asks for them,
// with a requestState the client echoes. The same tool code serves both
// (call.ask).

// capability is a client capability a tool may need.
type capability int

const (
	capSampling capability = iota
	capElicitForm
	capElicitURL
	capRoots
)

// capabilityOf is the capability an input request's method needs.
func capabilityOf(method string, params any) capability {
	switch method {
	case "sampling/createMessage":
		return capSampling
	case "roots/list":
		return capRoots
	}
	if p, ok := params.(mcp.ElicitParams); ok && p.Mode == mcp.ElicitModeURL {
		return capElicitURL
	}
	return capElicitForm
}

// has reports whether the client declared c: in initialize (legacy) or in
// the request's _meta (stateless). A stateless elicitation object with neither
// form nor url means form.
func (c *call) has(cp capability) bool {
	if !c.stateless() {
		caps := c.ss.capabilities()
		switch cp {
		case capSampling:
			return caps.Sampling != nil
		case capRoots:
			return caps.Roots != nil
		case capElicitURL:
			return caps.Elicitation != nil && caps.Elicitation.URL != nil
		}
		return caps.Elicitation != nil
	}
	caps := c.rq.caps
	switch cp {
	case capSampling:
		return caps.Sampling != nil
	case capRoots:
		return caps.Roots != nil
	case capElicitURL:
		return caps.Elicitation != nil && caps.Elicitation.URL != nil
	}
	return caps.Elicitation != nil && (caps.Elicitation.Form != nil || caps.Elicitation.URL == nil)
}

// need fails unless the client declared cp: legacy, a tool execution
// error (as these servers always said); stateless, error -32021
// (MissingRequiredClientCapability) naming it.
func (c *call) need(cp capability) error {
	if c.has(cp) {
		return nil
	}
	if c.stateless() {
		return missingCapability(cp)
	}
	name := map[capability]string{capSampling: "sampling", capRoots: "roots", capElicitForm: "elicitation", capElicitURL: "elicitation (url mode)"}[cp]
	return toolErr("the client did not declare the " + name + " capability")
}

// missingCapability is error -32021 for cp.
func missingCapability(cp capability) *jsonrpc.Error {
	required := map[capability]string{
		capSampling:   `{"sampling":{}}`,
		capRoots:      `{"roots":{}}`,
		capElicitForm: `{"elicitation":{"form":{}}}`,
		capElicitURL:  `{"elicitation":{"url":{}}}`,
	}[cp]
	what := map[capability]string{capSampling: "sampling", capRoots: "roots", capElicitForm: "elicitation (form mode)", capElicitURL: "elicitation (url mode)"}[cp]
	return &jsonrpc.Error{
		Code:    jsonrpc.CodeMissingClientCapability,
		Message: "Server requires the " + what + " capability for this request",
		Data:    json.RawMessage(`{"requiredCapabilities":` + required + `}`),
	}
}

// inputRequest is one request of an input_required result.
type inputRequest struct {
	Method string `json:"method"`
	Params any    `json:"params,omitempty"`
}

// inputRequired ends a stateless request with an input_required result:
// the inputs the client must gather (none for a requestState-only
// round) and the state it must echo ("" for none).
type inputRequired struct {
	requests map[string]inputRequest
	state    string
}

func (e *inputRequired) Error() string {
	return "input required: " + strings.Join(slices.Sorted(maps.Keys(e.requests)), ", ")
}

// inputRequiredResult is the result of a stateless request that needs input.
func (s *Server) inputRequiredResult(ir *inputRequired) (json.RawMessage, error) {
	body, err := json.Marshal(struct {
		InputRequests map[string]inputRequest `json:"inputRequests,omitempty"`
		RequestState  string                  `json:"requestState,omitempty"`
	}{ir.requests, ir.state})
	if err != nil {
		return nil, err
	}
	return s.withResultFields(body, map[string]any{"resultType": mcp.ResultInputRequired})
}

// ask1 gets the client's answer to one request: legacy, by sending it to
// the client; stateless, from the retry's inputResponses under key, else an
// input_required result asking for it (echoing the retry's state). A
// stateless client that did not declare the capability gets -32021.
func (c *call) ask1(key, method string, params any) (json.RawMessage, error) {
	got, err := c.ask(c.state, map[string]inputRequest{key: {method, params}})
	if err != nil {
		return nil, err
	}
	return got[key], nil
}

// ask gets the client's answers to reqs, by key. Legacy: each is sent to
// the client in the order of the keys. Stateless: they are read from the
// retry's inputResponses; when some are missing, the error is an
// input_required result asking for those, with state. A task gets them
// as its era says (taskAsk).
func (c *call) ask(state string, reqs map[string]inputRequest) (map[string]json.RawMessage, error) {
	if c.task != nil {
		return c.ss.srv.taskAsk(c, reqs)
	}
	out := make(map[string]json.RawMessage, len(reqs))
	if !c.stateless() {
		for _, key := range slices.Sorted(maps.Keys(reqs)) {
			r := reqs[key]
			res, err := c.ss.request(c.ctx, r.Method, r.Params)
			if err != nil {
				return nil, err
			}
			out[key] = res
		}
		return out, nil
	}
	missing := map[string]inputRequest{}
	for key, r := range reqs {
		if err := c.need(capabilityOf(r.Method, r.Params)); err != nil {
			return nil, err
		}
		if res, ok := c.inputs[key]; ok && len(res) > 0 && string(res) != "null" {
			out[key] = res
		} else {
			missing[key] = r
		}
	}
	if len(missing) > 0 {
		return nil, &inputRequired{requests: missing, state: state}
	}
	return out, nil
}

// inputErr is the error of a tool whose ask failed: an input_required
// result or a protocol error goes on as is; a failed legacy request to
// the client becomes the tool's error text.
func (c *call) inputErr(method string, err error) error {
	if c.protocolErr(err) != nil {
		return err
	}
	return clientRequestErr(method, err)
}

// protocolErr returns err if it must reach the client as a result of
// its own (input_required) or as a JSON-RPC error, rather than as a tool
// execution error: only in the stateless era.
func (c *call) protocolErr(err error) error {
	if !c.stateless() {
		return nil
	}
	if _, ok := errors.AsType[*inputRequired](err); ok {
		return err
	}
	if _, ok := errors.AsType[*jsonrpc.Error](err); ok {
		return err
	}
	return nil
}

// logEnabled reports whether a log message at level may be sent for the
// call: legacy, past the session's logging/setLevel; stateless, only when the
// request asked for logs, at or above its level.
func (c *call) logEnabled(level mcp.LoggingLevel) bool {
	if c.stateless() {
		return c.rq.logLevel >= 0 && severity(level) >= c.rq.logLevel
	}
	return c.ss.logEnabled(level)
}

// ---- requestState ----

// plainState encodes v as an unprotected requestState: base64url JSON.
// Tampering with it can only make the request fail (or, for the tools
// that use it, change an answer nothing relies on).
func plainState(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

// readPlainState decodes a plainState into v; a malformed one is an
// invalid-params error.
func (c *call) readPlainState(v any) error {
	b, err := base64.RawURLEncoding.DecodeString(c.state)
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		c.ss.srv.count(func(st *Stats) { st.StateRejected++ })
		return invalidParams("requestState is malformed: " + err.Error())
	}
	return nil
}

// signedPayload is what a signed requestState binds: the request (method,
// name, a digest of its arguments), an expiry, a nonce for single use,
// and the tool's own data.
type signedPayload struct {
	Method  string          `json:"m"`
	Name    string          `json:"n"`
	Digest  string          `json:"d"`
	Expires int64           `json:"e"` // unix milliseconds
	Nonce   string          `json:"o"`
	Data    json.RawMessage `json:"x,omitempty"`
}

// signedStateTTL is how long a signed requestState is accepted.
const signedStateTTL = 5 * time.Minute

// maxNonces bounds the consumed nonces the server remembers.
const maxNonces = 10000

// digest is a digest of a request's arguments (keys sorted by encoding
// them from a map).
func digest(args json.RawMessage) string {
	var v any
	if json.Unmarshal(args, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			args = b
		}
	}
	sum := sha256.Sum256(args)
	return hex.EncodeToString(sum[:8])
}

// signState returns an integrity-protected requestState for the call:
// base64url(payload) "." base64url(HMAC-SHA256(payload)).
func (c *call) signState(args json.RawMessage, data any) string {
	var nonce [12]byte
	_, _ = rand.Read(nonce[:])
	raw, _ := json.Marshal(data)
	p := signedPayload{
		Method: c.method, Name: c.name, Digest: digest(args),
		Expires: time.Now().Add(signedStateTTL).UnixMilli(),
		Nonce:   base64.RawURLEncoding.EncodeToString(nonce[:]), Data: raw,
	}
	b, _ := json.Marshal(p)
	mac := hmac.New(sha256.New, c.ss.srv.stateKey[:])
	mac.Write(b)
	return base64.RawURLEncoding.EncodeToString(b) + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// verifyState checks the call's signed requestState: the signature, the
// request it was issued for, the expiry, and that it was not used yet
// (it is used up by this call). It returns the tool's data; a failure is
// an invalid-params error, counted in Stats.StateRejected.
func (c *call) verifyState(args json.RawMessage) (json.RawMessage, error) {
	reject := func(why string) (json.RawMessage, error) {
		c.ss.srv.count(func(st *Stats) { st.StateRejected++ })
		return nil, invalidParams("requestState rejected: " + why)
	}
	body, sig, ok := strings.Cut(c.state, ".")
	if !ok {
		return reject("not a signed state")
	}
	b, err1 := base64.RawURLEncoding.DecodeString(body)
	got, err2 := base64.RawURLEncoding.DecodeString(sig)
	if err1 != nil || err2 != nil {
		return reject("not a signed state")
	}
	mac := hmac.New(sha256.New, c.ss.srv.stateKey[:])
	mac.Write(b)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return reject("signature mismatch (the state was altered)")
	}
	var p signedPayload
	if err := json.Unmarshal(b, &p); err != nil {
		return reject("unreadable payload")
	}
	switch {
	case p.Method != c.method || p.Name != c.name:
		return reject(fmt.Sprintf("issued for %s %q, presented on %s %q", p.Method, p.Name, c.method, c.name))
	case p.Digest != digest(args):
		return reject("issued for other arguments")
	case time.Now().UnixMilli() > p.Expires:
		return reject("expired")
	}
	if !c.ss.srv.useNonce(p.Nonce) {
		return reject("already used")
	}
	return p.Data, nil
}

// useNonce consumes a nonce; false if it was consumed before.
func (s *Server) useNonce(nonce string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nonces[nonce] {
		return false
	}
	s.nonces[nonce] = true
	s.nonceList = append(s.nonceList, nonce)
	if len(s.nonceList) > maxNonces {
		delete(s.nonces, s.nonceList[0])
		s.nonceList = s.nonceList[1:]
	}
	return true
}

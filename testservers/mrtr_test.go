package testservers

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
)

// mrtrAnswers are what a client answers each input request method with.
var mrtrAnswers = map[string]json.RawMessage{
	"sampling/createMessage": json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"m","stopReason":"endTurn"}`),
	"elicitation/create":     json.RawMessage(`{"action":"accept","content":{"name":"Ann"}}`),
	"roots/list":             json.RawMessage(`{"roots":[{"uri":"file:///a"},{"uri":"file:///b"}]}`),
}

// needInput decodes an input_required result and checks what every
// such result carries (serverInfo, no cache hints).
func needInput(t *testing.T, m *jsonrpc.Message) inputRequiredResult {
	t.Helper()
	checkStatelessResult(t, m, "input_required", -1)
	r := result[inputRequiredResult](t, m)
	if len(r.InputRequests) == 0 && r.RequestState == nil {
		t.Fatalf("input_required with neither inputRequests nor requestState: %s", m.Result)
	}
	return r
}

// answerAll answers every input request of r as mrtrAnswers says.
func answerAll(r inputRequiredResult) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for k, req := range r.InputRequests {
		out[k] = mrtrAnswers[req.Method]
	}
	return out
}

// retry returns params with the MRTR fields of a retry.
func retry(params map[string]any, inputs map[string]json.RawMessage, state *string) map[string]any {
	p := maps.Clone(params)
	if inputs != nil {
		p["inputResponses"] = inputs
	}
	if state != nil {
		p["requestState"] = *state
	}
	return p
}

// TestStatelessMRTRInputKinds: the tools that need one input kind ask for it
// with input_required and complete on the retry; without the capability
// they refuse with -32021.
func TestStatelessMRTRInputKinds(t *testing.T) {
	for _, tt := range []struct {
		tool, key, method string
		args              map[string]any
		capName           string
		caps              map[string]any
		want              string
		wantParams        string // a fragment of the input request's params
	}{
		{"sample", "sample", "sampling/createMessage", map[string]any{"prompt": "capital?"}, "sampling",
			map[string]any{"sampling": map[string]any{}}, "Paris", `"text":"capital?"`},
		{"elicit", "elicit", "elicitation/create", map[string]any{"message": "who?"}, "elicitation",
			map[string]any{"elicitation": map[string]any{}}, `accept {"name":"Ann"}`, `"mode":"form"`},
		{"roots", "roots", "roots/list", nil, "roots",
			map[string]any{"roots": map[string]any{}}, "file:///a\nfile:///b", ""},
		{"elicit_url", "authorize", "elicitation/create", map[string]any{"url": "https://example.com/x"}, "elicitation",
			map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}, "accept", `"url":"https://example.com/x"`},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			for _, jsonMode := range []bool{false, true} {
				s, w := startStatelessHTTP(t, HTTPOptions{JSONResponse: jsonMode})
				w.caps = tt.caps
				params := map[string]any{"name": tt.tool, "arguments": tt.args}
				m, _ := w.ok(t, 1, "tools/call", params)
				r := needInput(t, m)
				if got := slices.Collect(maps.Keys(r.InputRequests)); !slices.Equal(got, []string{tt.key}) {
					t.Fatalf("inputRequests %v, want [%s]", got, tt.key)
				}
				req := r.InputRequests[tt.key]
				if req.Method != tt.method || !strings.Contains(string(req.Params), tt.wantParams) {
					t.Errorf("input request %s %s", req.Method, req.Params)
				}
				if strings.Contains(string(req.Params), "elicitationId") {
					t.Errorf("an elicitationId in 2026-07-28: %s", req.Params)
				}
				m, _ = w.ok(t, 2, "tools/call", retry(params, answerAll(r), r.RequestState))
				checkStatelessResult(t, m, "complete", -1)
				if text, isErr := toolText(t, m); text != tt.want || isErr {
					t.Errorf("result %q %v, want %q", text, isErr, tt.want)
				}

				// Without the capability: -32021 naming it, status 400.
				w.caps = map[string]any{}
				m, _, code := w.call(t, 3, "tools/call", params, nil)
				if code != 400 {
					t.Errorf("status %d, want 400", code)
				}
				wantErrorCode(t, m, jsonrpc.CodeMissingClientCapability)
				d := errorData[struct {
					Required map[string]json.RawMessage `json:"requiredCapabilities"`
				}](t, m)
				if _, ok := d.Required[tt.capName]; !ok {
					t.Errorf("requiredCapabilities %v, want %s", d.Required, tt.capName)
				}
				if st := s.Server().Stats(); st.InputRequired[tt.tool] != 1 || st.Errors[jsonrpc.CodeMissingClientCapability] != 1 {
					t.Errorf("stats InputRequired %v Errors %v", st.InputRequired, st.Errors)
				}
			}
		})
	}
}

// TestStatelessMRTRFormOnlyIsNotURL: elicitation declared with form only
// does not allow url mode.
func TestStatelessMRTRFormOnlyIsNotURL(t *testing.T) {
	_, w := startStatelessHTTP(t, HTTPOptions{})
	w.caps = map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}
	m, _, code := w.call(t, 1, "tools/call", map[string]any{"name": "elicit_url"}, nil)
	if code != 400 {
		t.Errorf("status %d", code)
	}
	wantErrorCode(t, m, jsonrpc.CodeMissingClientCapability)
	// url only: no form mode.
	w.caps = map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}
	m, _, _ = w.call(t, 2, "tools/call", map[string]any{"name": "elicit", "arguments": map[string]any{"message": "m"}}, nil)
	wantErrorCode(t, m, jsonrpc.CodeMissingClientCapability)
}

// TestStatelessMRTRInputsAsksOnlyDeclared: the inputs tool never asks for a
// kind the client did not declare.
func TestStatelessMRTRInputsAsksOnlyDeclared(t *testing.T) {
	for _, tt := range []struct {
		name     string
		caps     map[string]any
		keys     []string
		skipped  string
		wantText string
	}{
		{"none", map[string]any{}, nil, `["elicitation","sampling","roots"]`, "no input kind declared"},
		{"roots", map[string]any{"roots": map[string]any{}}, []string{"roots"}, `["elicitation","sampling"]`, "roots: file:///a file:///b"},
		{"sampling and elicitation", map[string]any{"sampling": map[string]any{}, "elicitation": map[string]any{"form": map[string]any{}}},
			[]string{"capital", "name"}, `["roots"]`, "elicitation: accept {\"name\":\"Ann\"}\nsampling: Paris"},
		{"all", allCaps, []string{"capital", "name", "roots"}, `[]`,
			"elicitation: accept {\"name\":\"Ann\"}\nsampling: Paris\nroots: file:///a file:///b"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, w := startStatelessHTTP(t, HTTPOptions{})
			w.caps = tt.caps
			params := map[string]any{"name": "inputs"}
			m, _ := w.ok(t, 1, "tools/call", params)
			if tt.keys != nil {
				r := needInput(t, m)
				if got := slices.Sorted(maps.Keys(r.InputRequests)); !slices.Equal(got, tt.keys) {
					t.Fatalf("asked for %v, want %v", got, tt.keys)
				}
				m, _ = w.ok(t, 2, "tools/call", retry(params, answerAll(r), r.RequestState))
			}
			f := checkStatelessResult(t, m, "complete", -1)
			if text, _ := toolText(t, m); text != tt.wantText {
				t.Errorf("text %q, want %q", text, tt.wantText)
			}
			if !strings.Contains(string(f["structuredContent"]), `"skipped":`+tt.skipped) {
				t.Errorf("structuredContent %s", f["structuredContent"])
			}
		})
	}
}

func TestStatelessMRTRMultiRound(t *testing.T) {
	s, w := startStatelessHTTP(t, HTTPOptions{})
	w.caps = allCaps
	params := map[string]any{"name": "multi_round", "arguments": map[string]any{"rounds": 3}}
	m, _ := w.ok(t, 1, "tools/call", params)
	id := 2
	for round := 1; round <= 3; round++ {
		r := needInput(t, m)
		key := fmt.Sprintf("round-%d", round)
		if _, ok := r.InputRequests[key]; !ok || len(r.InputRequests) != 1 || r.RequestState == nil {
			t.Fatalf("round %d: %s", round, m.Result)
		}
		// A retry that leaves the round unanswered is asked the same again.
		m, _ = w.ok(t, id, "tools/call", retry(params, map[string]json.RawMessage{}, r.RequestState))
		id++
		again := needInput(t, m)
		if _, ok := again.InputRequests[key]; !ok || *again.RequestState != *r.RequestState {
			t.Fatalf("round %d asked again as %s", round, m.Result)
		}
		answer := json.RawMessage(fmt.Sprintf(`{"action":"accept","content":{"number":%d}}`, round*10))
		m, _ = w.ok(t, id, "tools/call", retry(params, map[string]json.RawMessage{key: answer}, r.RequestState))
		id++
	}
	f := checkStatelessResult(t, m, "complete", -1)
	if string(f["structuredContent"]) != `{"rounds":3,"sum":60}` {
		t.Errorf("structuredContent %s", f["structuredContent"])
	}
	if st := s.Server().Stats(); st.InputRequired["multi_round"] != 6 || st.ToolCalls["multi_round"] != 7 {
		t.Errorf("InputRequired %v ToolCalls %v", st.InputRequired, st.ToolCalls)
	}

	// A decline ends it with a tool error; a state naming another round
	// count is refused.
	m, _ = w.ok(t, id, "tools/call", params)
	r := needInput(t, m)
	m, _ = w.ok(t, id+1, "tools/call", retry(params, map[string]json.RawMessage{"round-1": json.RawMessage(`{"action":"decline"}`)}, r.RequestState))
	if text, isErr := toolText(t, m); text != "decline at round 1" || !isErr {
		t.Errorf("decline: %q %v", text, isErr)
	}
	bad := plainState(roundState{Round: 9})
	m, _, _ = w.call(t, id+2, "tools/call", retry(params, nil, &bad), nil)
	wantErrorCode(t, m, jsonrpc.CodeInvalidParams)
	garbage := "%%%"
	m, _, _ = w.call(t, id+3, "tools/call", retry(params, nil, &garbage), nil)
	wantErrorCode(t, m, jsonrpc.CodeInvalidParams)
	if st := s.Server().Stats(); st.StateRejected != 2 {
		t.Errorf("StateRejected %d", st.StateRejected)
	}
}

func TestStatelessMRTRStateOnly(t *testing.T) {
	_, w := startStatelessHTTP(t, HTTPOptions{})
	params := map[string]any{"name": "state_only", "arguments": map[string]any{"rounds": 2}}
	m, _ := w.ok(t, 1, "tools/call", params)
	for i := range 2 {
		r := needInput(t, m)
		if len(r.InputRequests) != 0 || r.RequestState == nil {
			t.Fatalf("round %d: %s", i, m.Result)
		}
		if strings.Contains(string(m.Result), "inputRequests") {
			t.Errorf("inputRequests present: %s", m.Result)
		}
		m, _ = w.ok(t, i+2, "tools/call", retry(params, nil, r.RequestState))
	}
	if text, _ := toolText(t, m); text != "done after 2 round trip(s)" {
		t.Errorf("text %q", text)
	}
}

func TestStatelessMRTRSignedState(t *testing.T) {
	s, w := startStatelessHTTP(t, HTTPOptions{})
	w.caps = allCaps
	params := map[string]any{"name": "signed", "arguments": map[string]any{"amount": 5}}
	first := func(id int) inputRequiredResult {
		m, _ := w.ok(t, id, "tools/call", params)
		r := needInput(t, m)
		if _, ok := r.InputRequests["confirm"]; !ok || r.RequestState == nil || !strings.Contains(*r.RequestState, ".") {
			t.Fatalf("first round %s", m.Result)
		}
		return r
	}
	yes := map[string]json.RawMessage{"confirm": json.RawMessage(`{"action":"accept","content":{"confirm":true}}`)}

	r := first(1)
	m, _ := w.ok(t, 2, "tools/call", retry(params, yes, r.RequestState))
	if text, isErr := toolText(t, m); text != "transferred 5" || isErr {
		t.Errorf("transfer: %q %v", text, isErr)
	}
	// Replayed: refused.
	m, _, _ = w.call(t, 3, "tools/call", retry(params, yes, r.RequestState), nil)
	wantErrorCode(t, m, jsonrpc.CodeInvalidParams)
	if !strings.Contains(m.Error.Message, "already used") {
		t.Errorf("replay: %v", m.Error)
	}

	tamper := func(state string) string {
		b := []byte(state)
		i := strings.IndexByte(state, '.') / 2
		b[i] ^= 1
		return string(b)
	}
	for _, tt := range []struct {
		name   string
		params map[string]any
		state  func(string) string
		why    string
	}{
		{"tampered", params, tamper, "requestState rejected"},
		{"other arguments", map[string]any{"name": "signed", "arguments": map[string]any{"amount": 500}}, func(s string) string { return s }, "other arguments"},
		{"not signed", params, func(string) string { return "abc" }, "not a signed state"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := first(10)
			state := tt.state(*r.RequestState)
			m, _, code := w.call(t, 11, "tools/call", retry(tt.params, yes, &state), nil)
			if code != 200 {
				t.Errorf("status %d", code)
			}
			wantErrorCode(t, m, jsonrpc.CodeInvalidParams)
			if !strings.Contains(m.Error.Message, tt.why) {
				t.Errorf("error %v, want %q", m.Error, tt.why)
			}
		})
	}
	if st := s.Server().Stats(); st.StateRejected != 4 {
		t.Errorf("StateRejected %d, want 4", st.StateRejected)
	}
}

// TestStatelessMRTRPromptAndResource: prompts/get and resources/read may
// need input too.
func TestStatelessMRTRPromptAndResource(t *testing.T) {
	s, w := startStatelessHTTP(t, HTTPOptions{Options: Options{CacheTTL: time.Millisecond}})
	w.caps = allCaps
	for _, tt := range []struct {
		method string
		params map[string]any
		key    string
		answer string
		want   string
		ttl    int64
	}{
		{"prompts/get", map[string]any{"name": "ask_name"}, "name", `{"action":"accept","content":{"name":"Ann"}}`, "Please greet Ann.", -1},
		{"resources/read", map[string]any{"uri": SecretResourceURI}, "consent", `{"action":"accept","content":{"reveal":true}}`, "the secret is 42", 1},
	} {
		m, _ := w.ok(t, 1, tt.method, tt.params)
		r := needInput(t, m)
		if _, ok := r.InputRequests[tt.key]; !ok {
			t.Fatalf("%s: %s", tt.method, m.Result)
		}
		m, _ = w.ok(t, 2, tt.method, retry(tt.params, map[string]json.RawMessage{tt.key: json.RawMessage(tt.answer)}, r.RequestState))
		checkStatelessResult(t, m, "complete", tt.ttl)
		if !strings.Contains(string(m.Result), tt.want) {
			t.Errorf("%s: %s", tt.method, m.Result)
		}
	}
	if st := s.Server().Stats(); st.InputRequired["ask_name"] != 1 || st.InputRequired[SecretResourceURI] != 1 {
		t.Errorf("InputRequired %v", st.InputRequired)
	}
	w.caps = map[string]any{}
	m, _, code := w.call(t, 3, "resources/read", map[string]any{"uri": SecretResourceURI}, nil)
	if code != 400 {
		t.Errorf("status %d", code)
	}
	wantErrorCode(t, m, jsonrpc.CodeMissingClientCapability)
}

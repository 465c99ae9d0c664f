package testservers

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// Names of what the servers offer to stateless requests only.
const (
	// NonASCIIToolName is a tool whose name needs the Base64 sentinel in
	// Mcp-Name; it greets: "grüße, NAME".
	NonASCIIToolName = "grüße"
	// NonASCIIPromptName is a prompt whose name needs the sentinel.
	NonASCIIPromptName = "grüße"
	// NonASCIIResourceURI is a resource whose URI needs the sentinel; its
	// text is "naïve".
	NonASCIIResourceURI = "test://static/naïve"
	// SecretResourceURI is a resource whose read needs the user's consent
	// (an elicitation, through MRTR); its text is "the secret is 42".
	SecretResourceURI = "test://mrtr/secret"
)

// HeaderToolName is the tool whose inputSchema annotates parameters with
// x-mcp-header: region (string, Mcp-Param-Region), priority (integer,
// Mcp-Param-Priority), dryRun (boolean, Mcp-Param-Dry-Run) and
// target.zone (a string in a nested object, Mcp-Param-Zone); query is not
// mirrored. Over HTTP the server checks every one of them against its
// header (-32020 when one is missing, extra or different). It returns its
// arguments as structuredContent.
const HeaderToolName = "headers"

var statelessTools = []toolDef{
	{tool: mcp.Tool{
		Name:        "elicit_url",
		Description: "Asks the user, through an elicitation in url mode, to visit a page; returns the action. Needs elicitation.url.",
		InputSchema: schema(`{"type":"object","properties":{"url":{"type":"string","description":"the page; https://example.com/authorize when empty"}}}`),
	}, run: toolElicitURL, statelessOnly: true},
	{tool: mcp.Tool{
		Name:        "inputs",
		Description: "Asks in one round for every input kind the client declared (elicitation form \"name\", sampling \"capital\", roots \"roots\"), never for one it did not; returns what it got and what it skipped.",
		InputSchema: schema(`{"type":"object"}`),
	}, run: toolInputs, statelessOnly: true},
	{tool: mcp.Tool{
		Name:         "multi_round",
		Description:  "Asks for a number (elicitation \"round-K\") in each of rounds rounds, one round per retry, carrying the running sum in requestState; asks again for a round left unanswered; returns the sum.",
		InputSchema:  schema(`{"type":"object","properties":{"rounds":{"type":"integer","minimum":1,"maximum":10,"default":3}}}`),
		OutputSchema: schema(`{"type":"object","properties":{"sum":{"type":"number"},"rounds":{"type":"integer"}},"required":["sum","rounds"]}`),
	}, run: toolMultiRound, statelessOnly: true},
	{tool: mcp.Tool{
		Name:        "state_only",
		Description: "Answers input_required with a requestState and no inputRequests rounds times (the client retries at once, echoing the state), then completes.",
		InputSchema: schema(`{"type":"object","properties":{"rounds":{"type":"integer","minimum":0,"maximum":10,"default":2}}}`),
	}, run: toolStateOnly, statelessOnly: true},
	{tool: mcp.Tool{
		Name:        "signed",
		Description: "A transfer that needs the user's confirmation (elicitation \"confirm\"); its requestState is signed (HMAC), bound to the call's arguments, expires, and is single-use: a tampered, replayed or misplaced state is refused with error -32602.",
		InputSchema: schema(`{"type":"object","properties":{"amount":{"type":"integer","minimum":1}},"required":["amount"]}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: &no, IdempotentHint: &no},
	}, run: toolSigned, statelessOnly: true},
	{tool: mcp.Tool{
		Name:        HeaderToolName,
		Description: "Mirrors region, priority, dryRun and target.zone into Mcp-Param-* headers (x-mcp-header); returns its arguments.",
		InputSchema: schema(`{"type":"object","properties":{` +
			`"region":{"type":"string","x-mcp-header":"Region"},` +
			`"priority":{"type":"integer","x-mcp-header":"Priority"},` +
			`"dryRun":{"type":"boolean","x-mcp-header":"Dry-Run"},` +
			`"target":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},` +
			`"query":{"type":"string"}},"required":["region","query"]}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: &yes},
	}, run: toolHeaders, statelessOnly: true},
	{tool: mcp.Tool{
		Name:        NonASCIIToolName,
		Description: "Greets name: \"grüße, NAME\". Its name is not plain ASCII.",
		InputSchema: schema(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: &yes},
	}, run: toolGreet, statelessOnly: true},
}

// invalidHeaderTools break the x-mcp-header rules, each in one way; they
// are listed only with Options.InvalidHeaderTools. Called, they echo.
var invalidHeaderTools = func() []toolDef {
	bad := []struct{ name, schema string }{
		{"bad_header_number", `{"type":"object","properties":{"amount":{"type":"number","x-mcp-header":"Amount"}}}`},
		{"bad_header_duplicate", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"region"}}}`},
		{"bad_header_items", `{"type":"object","properties":{"list":{"type":"array","items":{"type":"string","x-mcp-header":"Item"}}}}`},
		{"bad_header_oneof", `{"type":"object","properties":{"a":{"oneOf":[{"type":"string","x-mcp-header":"Choice"}]}}}`},
		{"bad_header_token", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Bad Name"}}}`},
		{"bad_header_empty", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`},
		{"bad_header_object", `{"type":"object","properties":{"o":{"type":"object","x-mcp-header":"Obj","properties":{}}}}`},
	}
	out := make([]toolDef, len(bad))
	for i, b := range bad {
		out[i] = toolDef{tool: mcp.Tool{
			Name:        b.name,
			Description: "An invalid x-mcp-header annotation: a client must leave this tool out.",
			InputSchema: schema(b.schema),
		}, run: toolEchoArgs, statelessOnly: true, invalidHeaders: true}
	}
	return out
}()

// StatelessToolNames returns the names of the tools tools/list returns to a
// stateless request, in its order: ToolNames, then the stateless-only ones
// (without those of InvalidHeaderToolNames).
func StatelessToolNames() []string {
	names := make([]string, len(statelessToolList))
	for i, t := range statelessToolList {
		names[i] = t.Name
	}
	return names
}

// InvalidHeaderToolNames returns the names of the tools whose
// x-mcp-header annotations are invalid (a number, a duplicate name, one
// under items, under oneOf, a name that is no token, an empty name, one on
// an object), listed after the others with Options.InvalidHeaderTools.
func InvalidHeaderToolNames() []string {
	names := make([]string, len(invalidHeaderTools))
	for i, t := range invalidHeaderTools {
		names[i] = t.tool.Name
	}
	return names
}

func toolElicitURL(c *call, raw json.RawMessage) (any, error) {
	var a struct {
		URL string `json:"url"`
	}
	if err := args(raw, &a); err != nil {
		return nil, err
	}
	if a.URL == "" {
		a.URL = "https://example.com/authorize"
	}
	if err := c.need(capElicitURL); err != nil {
		return nil, err
	}
	res, err := c.ask1("authorize", "elicitation/create", mcp.ElicitParams{
		Mode:    mcp.ElicitModeURL,
		Message: "Please open the page to authorize the test server.",
		URL:     a.URL,
	})
	if err != nil {
		return nil, c.inputErr("elicitation/create", err)
	}
	var r mcp.ElicitResult
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, toolErr("elicitation/create: bad result: " + err.Error())
	}
	return textResult(r.Action), nil
}

func toolInputs(c *call, _ json.RawMessage) (any, error) {
	all := []struct {
		key, kind string
		cp        capability
		req       inputRequest
	}{
		{"name", "elicitation", capElicitForm, inputRequest{"elicitation/create", mcp.ElicitParams{
			Mode: mcp.ElicitModeForm, Message: "What is your name?", RequestedSchema: json.RawMessage(elicitSchema)}}},
		{"capital", "sampling", capSampling, inputRequest{"sampling/createMessage", mcp.CreateMessageParams{
			Messages:  []mcp.SamplingMessage{{Role: "user", Content: mcp.Contents{mcp.TextContent("What is the capital of France?")}}},
			MaxTokens: 100}}},
		{"roots", "roots", capRoots, inputRequest{Method: "roots/list"}},
	}
	reqs := map[string]inputRequest{}
	var asked, skipped []string
	for _, in := range all {
		if c.has(in.cp) {
			reqs[in.key] = in.req
			asked = append(asked, in.kind)
		} else {
			skipped = append(skipped, in.kind)
		}
	}
	got, err := c.ask("", reqs)
	if err != nil {
		return nil, c.inputErr("input requests", err)
	}
	var lines []string
	for _, in := range all {
		res, ok := got[in.key]
		if !ok {
			continue
		}
		var text string
		switch in.kind {
		case "elicitation":
			var r mcp.ElicitResult
			if err := json.Unmarshal(res, &r); err != nil {
				return nil, toolErr("name: bad elicitation result: " + err.Error())
			}
			if text, err = elicitedText(r); err != nil {
				return nil, err
			}
		case "sampling":
			var r mcp.CreateMessageResult
			if err := json.Unmarshal(res, &r); err != nil {
				return nil, toolErr("capital: bad sampling result: " + err.Error())
			}
			text = sampledText(r)
		case "roots":
			var r mcp.ListRootsResult
			if err := json.Unmarshal(res, &r); err != nil {
				return nil, toolErr("roots: bad roots result: " + err.Error())
			}
			text = strings.ReplaceAll(rootURIs(r), "\n", " ")
		}
		lines = append(lines, in.kind+": "+text)
	}
	if len(lines) == 0 {
		lines = append(lines, "no input kind declared")
	}
	res := textResult(strings.Join(lines, "\n"))
	res.StructuredContent, _ = json.Marshal(map[string][]string{"asked": nonNil(asked), "skipped": nonNil(skipped)})
	return res, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// roundState is multi_round's requestState.
type roundState struct {
	Round int     `json:"round"` // the round asked for
	Sum   float64 `json:"sum"`   // of the rounds before it
}

func toolMultiRound(c *call, raw json.RawMessage) (any, error) {
	a := struct {
		Rounds int `json:"rounds"`
	}{Rounds: 3}
	if err := args(raw, &a); err != nil {
		return nil, err
	}
	if a.Rounds < 1 || a.Rounds > 10 {
		return nil, toolErr("invalid arguments: rounds must be within 1…10")
	}
	if err := c.need(capElicitForm); err != nil {
		return nil, err
	}
	st := roundState{Round: 1}
	if c.hasState {
		if err := c.readPlainState(&st); err != nil {
			return nil, err
		}
		if st.Round < 1 || st.Round > a.Rounds {
			c.ss.srv.count(func(s *Stats) { s.StateRejected++ })
			return nil, invalidParams(fmt.Sprintf("requestState names round %d of %d", st.Round, a.Rounds))
		}
	}
	for {
		key := fmt.Sprintf("round-%d", st.Round)
		res, err := c.ask(plainState(st), map[string]inputRequest{key: {"elicitation/create", mcp.ElicitParams{
			Mode:            mcp.ElicitModeForm,
			Message:         fmt.Sprintf("Round %d of %d: pick a number", st.Round, a.Rounds),
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"number":{"type":"number"}},"required":["number"]}`),
		}}})
		if err != nil {
			return nil, c.inputErr("elicitation/create", err)
		}
		var r struct {
			Action  string `json:"action"`
			Content struct {
				Number *float64 `json:"number"`
			} `json:"content"`
		}
		if err := json.Unmarshal(res[key], &r); err != nil {
			return nil, toolErr(key + ": bad elicitation result: " + err.Error())
		}
		if r.Action != mcp.ElicitAccept {
			return nil, toolErr(fmt.Sprintf("%s at round %d", r.Action, st.Round))
		}
		if r.Content.Number == nil {
			return nil, toolErr(key + ": no number in the answer")
		}
		st.Sum += *r.Content.Number
		if st.Round == a.Rounds {
			res := textResult(fmt.Sprintf("sum %s after %d rounds", formatNumber(st.Sum), a.Rounds))
			res.StructuredContent, _ = json.Marshal(map[string]any{"sum": st.Sum, "rounds": a.Rounds})
			return res, nil
		}
		st.Round++
		if c.stateless() {
			// The next round's answer cannot be in this retry: ask for it.
			c.inputs = nil
		}
	}
}

func toolStateOnly(c *call, raw json.RawMessage) (any, error) {
	a := struct {
		Rounds int `json:"rounds"`
	}{Rounds: 2}
	if err := args(raw, &a); err != nil {
		return nil, err
	}
	if a.Rounds < 0 || a.Rounds > 10 {
		return nil, toolErr("invalid arguments: rounds must be within 0…10")
	}
	if !c.stateless() {
		return textResult("done at once (no MRTR in this era)"), nil
	}
	var st struct {
		Done int `json:"done"`
	}
	if c.hasState {
		if err := c.readPlainState(&st); err != nil {
			return nil, err
		}
	}
	if st.Done < a.Rounds {
		st.Done++
		return nil, &inputRequired{state: plainState(st)}
	}
	return textResult(fmt.Sprintf("done after %d round trip(s)", st.Done)), nil
}

func toolSigned(c *call, raw json.RawMessage) (any, error) {
	var a struct {
		Amount *int64 `json:"amount"`
	}
	if err := args(raw, &a); err != nil {
		return nil, err
	}
	if a.Amount == nil || *a.Amount < 1 {
		return nil, toolErr("invalid arguments: amount must be a positive integer")
	}
	if err := c.need(capElicitForm); err != nil {
		return nil, err
	}
	confirm := map[string]inputRequest{"confirm": {"elicitation/create", mcp.ElicitParams{
		Mode:            mcp.ElicitModeForm,
		Message:         fmt.Sprintf("Transfer %d?", *a.Amount),
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`),
	}}}
	if !c.stateless() {
		return nil, toolErr("signed is a stateless tool")
	}
	if !c.hasState {
		return nil, &inputRequired{requests: confirm, state: c.signState(raw, nil)}
	}
	if _, err := c.verifyState(raw); err != nil {
		return nil, err
	}
	res, ok := c.inputs["confirm"]
	if !ok {
		// The state is used up: ask again with a fresh one.
		return nil, &inputRequired{requests: confirm, state: c.signState(raw, nil)}
	}
	var r struct {
		Action  string `json:"action"`
		Content struct {
			Confirm bool `json:"confirm"`
		} `json:"content"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, toolErr("confirm: bad elicitation result: " + err.Error())
	}
	if r.Action != mcp.ElicitAccept || !r.Content.Confirm {
		return textResult("transfer cancelled"), nil
	}
	return textResult(fmt.Sprintf("transferred %d", *a.Amount)), nil
}

func toolHeaders(_ *call, raw json.RawMessage) (any, error) {
	var a struct {
		Region *string `json:"region"`
		Query  *string `json:"query"`
	}
	if err := args(raw, &a); err != nil {
		return nil, err
	}
	if a.Region == nil || a.Query == nil {
		return nil, toolErr("invalid arguments: region and query are required")
	}
	return toolEchoArgs(nil, raw)
}

// toolEchoArgs returns its arguments as structuredContent and text.
func toolEchoArgs(_ *call, raw json.RawMessage) (any, error) {
	res := textResult(string(raw))
	res.StructuredContent = raw
	return res, nil
}

func toolGreet(_ *call, raw json.RawMessage) (any, error) {
	var a struct {
		Name string `json:"name"`
	}
	if err := args(raw, &a); err != nil {
		return nil, err
	}
	return textResult("grüße, " + a.Name), nil
}

// ---- prompts and resources that need input ----

// askName is the prompt ask_name: it asks the user's name (MRTR) and
// greets them.
func (ss *Session) askName(c *call) (any, error) {
	res, err := c.ask1("name", "elicitation/create", mcp.ElicitParams{
		Mode: mcp.ElicitModeForm, Message: "What is your name?", RequestedSchema: json.RawMessage(elicitSchema),
	})
	if err != nil {
		return nil, c.inputErr("elicitation/create", err)
	}
	var r mcp.ElicitResult
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, invalidParams("name: bad elicitation result: " + err.Error())
	}
	name, _ := r.Content["name"].(string)
	if r.Action != mcp.ElicitAccept || name == "" {
		return nil, invalidParams("prompts/get ask_name: the user gave no name (" + r.Action + ")")
	}
	return mcp.GetPromptResult{
		Description: "Greeting for " + name,
		Messages:    []mcp.PromptMessage{{Role: "user", Content: mcp.TextContent("Please greet " + name + ".")}},
	}, nil
}

// readSecret reads SecretResourceURI once the user consents (MRTR).
func (ss *Session) readSecret(c *call) (any, error) {
	if err := c.need(capElicitForm); err != nil {
		return nil, err
	}
	res, err := c.ask1("consent", "elicitation/create", mcp.ElicitParams{
		Mode: mcp.ElicitModeForm, Message: "Reveal the secret?",
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{"reveal":{"type":"boolean"}},"required":["reveal"]}`),
	})
	if err != nil {
		return nil, c.inputErr("elicitation/create", err)
	}
	var r struct {
		Action  string `json:"action"`
		Content struct {
			Reveal bool `json:"reveal"`
		} `json:"content"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, invalidParams("consent: bad elicitation result: " + err.Error())
	}
	if r.Action != mcp.ElicitAccept || !r.Content.Reveal {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "resources/read "+SecretResourceURI+": the user did not consent")
	}
	return mcp.ReadResourceResult{Contents: []mcp.ResourceContents{{URI: SecretResourceURI, MimeType: "text/plain", Text: "the secret is 42"}}}, nil
}

// StatelessResourceURIs returns the URIs resources/list returns to a stateless
// request, in its order: ResourceURIs, then NonASCIIResourceURI and
// SecretResourceURI.
func StatelessResourceURIs() []string {
	return append(ResourceURIs(), NonASCIIResourceURI, SecretResourceURI)
}

var (
	statelessResources = []mcp.Resource{
		{URI: NonASCIIResourceURI, Name: "naive", Title: "A non-ASCII URI", MimeType: "text/plain"},
		{URI: SecretResourceURI, Name: "secret", Title: "Needs consent", MimeType: "text/plain"},
	}
	statelessResourceList = append(slices.Clone(resourceList), statelessResources...)
	statelessPrompts      = []mcp.Prompt{
		{Name: "ask_name", Title: "Ask name", Description: "Asks the user's name (elicitation, through MRTR), then greets them."},
		{Name: NonASCIIPromptName, Title: "Grüße", Description: "A prompt whose name is not plain ASCII."},
	}
	statelessPromptList = append(slices.Clone(promptList), statelessPrompts...)
)

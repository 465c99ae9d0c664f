package mcp

// Root is a directory or file the client exposes to the server.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
	Meta Meta   `json:"_meta,omitempty"`
}

// ListRootsResult is the client's answer to roots/list.
type ListRootsResult struct {
	Roots []Root `json:"roots"`
	Meta  Meta   `json:"_meta,omitempty"`
}

// CreateMessageParams are the params of sampling/createMessage.
type CreateMessageParams struct {
	Messages         []SamplingMessage `json:"messages"`
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitempty"`
	SystemPrompt     string            `json:"systemPrompt,omitempty"`
	IncludeContext   string            `json:"includeContext,omitempty"`
	Temperature      *float64          `json:"temperature,omitempty"`
	MaxTokens        int               `json:"maxTokens"`
	StopSequences    []string          `json:"stopSequences,omitempty"`
	Metadata         raw               `json:"metadata,omitempty"`
	Tools            []Tool            `json:"tools,omitempty"`
	ToolChoice       raw               `json:"toolChoice,omitempty"`
	Meta             Meta              `json:"_meta,omitempty"`
}

// SamplingMessage is one message of a sampling conversation.
type SamplingMessage struct {
	Role    string   `json:"role"`
	Content Contents `json:"content"`
	Meta    Meta     `json:"_meta,omitempty"`
}

// ModelPreferences guide the client's choice of model.
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitempty"`
	CostPriority         *float64    `json:"costPriority,omitempty"`
	SpeedPriority        *float64    `json:"speedPriority,omitempty"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitempty"`
}

// ModelHint names a model or model family.
type ModelHint struct {
	Name string `json:"name,omitempty"`
}

// CreateMessageResult is the client's answer to sampling/createMessage.
type CreateMessageResult struct {
	Role       string   `json:"role"`
	Content    Contents `json:"content"`
	Model      string   `json:"model"`
	StopReason string   `json:"stopReason,omitempty"`
	Meta       Meta     `json:"_meta,omitempty"`
}

// Elicitation modes.
const (
	ElicitModeForm = "form"
	ElicitModeURL  = "url"
)

// ElicitParams are the params of elicitation/create. Mode is "form"
// (RequestedSchema set; also when Mode is empty) or "url" (URL and
// ElicitationID set).
type ElicitParams struct {
	Mode            string `json:"mode,omitempty"`
	Message         string `json:"message"`
	RequestedSchema raw    `json:"requestedSchema,omitempty"`
	URL             string `json:"url,omitempty"`
	ElicitationID   string `json:"elicitationId,omitempty"`
	Meta            Meta   `json:"_meta,omitempty"`
}

// Elicitation actions.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// ElicitResult is the client's answer to elicitation/create.
type ElicitResult struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
	Meta    Meta           `json:"_meta,omitempty"`
}

package llm

// Provider names an LLM API whose tool format a Target follows.
type Provider string

// The providers. Each one's rules, and where each rule comes from, are in
// docs/llm.md.
const (
	// OpenAIChat is the Chat Completions API: {"type":"function","function":{...}}.
	OpenAIChat Provider = "openai"
	// OpenAIResponses is the Responses API: {"type":"function","name":...}.
	OpenAIResponses Provider = "openai-responses"
	// Anthropic is the Messages API: name, description, input_schema.
	Anthropic Provider = "anthropic"
	// Gemini is functionDeclarations with parametersJsonSchema.
	Gemini Provider = "gemini"
	// GeminiOpenAPI is functionDeclarations with parameters, the OpenAPI
	// subset older Gemini models take.
	GeminiOpenAPI Provider = "gemini-openapi"
	// OpenAICompatible is the Chat Completions format as the servers that
	// run local models take it (Ollama, vLLM, llama.cpp).
	OpenAICompatible Provider = "openai-compatible"
)

// Target is what a tool set is converted for: a provider, and whether its
// strict (constrained decoding) mode is asked for.
type Target struct {
	Provider Provider
	// Strict asks for the provider's strict mode where it has one. A tool
	// that cannot be made strict is sent loose, and its report says why.
	Strict bool
}

// Limits are a target's documented limits on a tool set, as docs/llm.md
// lists them; 0 means none is documented.
type Limits struct {
	// MaxTools is the most tools one request may carry (OpenAI: 128).
	MaxTools int
	// MaxName is the longest tool name, in bytes.
	MaxName int
	// MaxDescription is the longest tool description, in characters.
	MaxDescription int
}

// Limits returns the target's limits.
func (t Target) Limits() Limits {
	r := rulesFor(t.Provider)
	return Limits{MaxTools: r.maxTools, MaxName: r.nameMax, MaxDescription: r.descMax}
}

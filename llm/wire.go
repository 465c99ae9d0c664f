package llm

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// wrap builds the provider's tool object around a converted schema. The
// encoding is deterministic (struct fields in order, map keys sorted), so
// the same tools give the same bytes and a prompt cache holds.
func wrap(target Target, name, description string, params map[string]any, strict bool) (json.RawMessage, error) {
	var v any
	switch target.Provider {
	case OpenAIResponses:
		v = struct {
			Type        string         `json:"type"`
			Name        string         `json:"name"`
			Description string         `json:"description,omitempty"`
			Parameters  map[string]any `json:"parameters"`
			Strict      bool           `json:"strict"`
		}{"function", name, description, params, strict}
	case Anthropic:
		v = struct {
			Name        string         `json:"name"`
			Description string         `json:"description,omitempty"`
			InputSchema map[string]any `json:"input_schema"`
			Strict      bool           `json:"strict,omitempty"`
		}{name, description, params, strict}
	case Gemini:
		v = struct {
			Name        string         `json:"name"`
			Description string         `json:"description,omitempty"`
			Parameters  map[string]any `json:"parametersJsonSchema"`
		}{name, description, params}
	case GeminiOpenAPI:
		v = struct {
			Name        string         `json:"name"`
			Description string         `json:"description,omitempty"`
			Parameters  map[string]any `json:"parameters,omitempty"`
		}{name, description, params}
	default: // OpenAIChat, OpenAICompatible
		type function struct {
			Name        string         `json:"name"`
			Description string         `json:"description,omitempty"`
			Parameters  map[string]any `json:"parameters"`
			Strict      bool           `json:"strict,omitempty"`
		}
		v = struct {
			Type     string   `json:"type"`
			Function function `json:"function"`
		}{"function", function{name, description, params, strict}}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "<" stays "<": the model reads it
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// shortHash is the first 8 hex digits of the SHA-256 of s.
func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:4])
}

package llm

import (
	"fmt"
	"time"
)

// SamplingConfigError is a SamplingConfig that NewSampler refuses.
type SamplingConfigError struct {
	Field string // the SamplingConfig field at fault
	Why   string
}

func (e *SamplingConfigError) Error() string {
	return "sampling config: " + e.Field + ": " + e.Why
}

// SamplingContentError is a sampling/createMessage request the model's
// API cannot take as it is: audio for Anthropic, an image type it does
// not read, an unknown block type, a bad toolChoice. Nothing was sent.
type SamplingContentError struct {
	Provider Provider
	Message  int    // the index of the message at fault, or -1
	Type     string // the content block's type, if one is at fault
	Why      string
}

func (e *SamplingContentError) Error() string {
	s := "sampling/createMessage request"
	if e.Provider != "" {
		s += " for " + apiName(e.Provider)
	}
	if e.Message >= 0 && e.Type != "" {
		s += fmt.Sprintf(": message %d, %s content", e.Message, e.Type)
	}
	return s + ": " + e.Why
}

// SamplingAPIError is an error answer of the model's endpoint: its HTTP
// status, and the API's error type and message when it sent them (the
// message cut at 1 KiB, the key never in it).
type SamplingAPIError struct {
	Provider Provider
	Status   int
	Type     string // "rate_limit_error", "invalid_api_key", ...
	Message  string
	// RetryAfter is the endpoint's Retry-After, 0 when it sent none.
	RetryAfter time.Duration
}

func (e *SamplingAPIError) Error() string {
	s := fmt.Sprintf("sampling through %s: HTTP %d", apiName(e.Provider), e.Status)
	if e.Type != "" {
		s += " " + e.Type
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.RetryAfter > 0 {
		s += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	return s
}

// SamplingResponseError is a success answer of the model's endpoint that
// cannot be used: over the size bound, not the API's JSON, no message, a
// tool call whose arguments are not a JSON object.
type SamplingResponseError struct {
	Provider Provider
	Why      string
}

func (e *SamplingResponseError) Error() string {
	return "sampling through " + apiName(e.Provider) + ": unusable answer: " + e.Why
}

func apiName(p Provider) string {
	switch p {
	case Anthropic:
		return "the Anthropic Messages API"
	case OpenAIChat, OpenAICompatible:
		return "the Chat Completions API"
	}
	return string(p)
}

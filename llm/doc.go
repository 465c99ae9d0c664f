// Package llm hands MCP tools to an LLM and the results back, in the wire
// form each provider's API takes: OpenAI Chat Completions and Responses,
// Anthropic Messages, Google Gemini, and the OpenAI-compatible servers that
// local models run behind.
//
// The server's schema stays the truth. A tool's definition is converted per
// Target, and every change made to it is reported (Change); a tool that
// cannot be made valid for the target is reported too, never silently
// missing. Arguments the model sends are checked against the original
// schema and shaped back before the call.
//
// The typed adapters for the providers' Go SDKs live in their own module,
// so this package adds nothing to the library's go.mod.
package llm

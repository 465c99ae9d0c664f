// Package llm hands MCP tools to an LLM and the results back, in the wire
// form each provider's API takes: OpenAI Chat Completions and Responses,
// Anthropic Messages, Google Gemini, and the OpenAI-compatible servers that
// local models run behind.
//
// The server's schema stays the truth. Convert (one tool) and ConvertAll
// (a set, names kept unique) make each tool's definition for a Target,
// strict where the provider has a strict mode and the schema allows it.
// Every change made is reported (Tool.Changes): references inlined,
// allOf merged, keywords dropped or moved into the description, names
// fitted, objects closed. A tool that cannot be strict is sent loose, and
// one that cannot be valid at all is omitted; both say why. Every
// definition passes Check, which applies the provider's written rules
// (docs/llm.md lists each one and its source).
//
// Arguments the model sends are checked against the original schema and
// shaped back before the call (Tool.Arguments, Tool.Shape): nulls that
// strict mode forced are removed, and a JSON string where an object
// belongs is parsed. What is still wrong comes back as an *ArgumentError
// whose text the model can act on.
//
// Result turns a CallToolResult into the provider's tool-result message:
// images and documents as the provider's own blocks where it has them, a
// described placeholder where it has none. A result over the cap keeps its
// head and tail; the rest waits in a Store for the read_result tool.
//
// A Toolbox puts it together over a Conn or a fleet (FromConn, FromFleet):
// Definitions for the request, Call for each tool call the model makes.
// Over its token budget it offers search_tools, describe_tool and
// call_tool (MetaTools) instead of every tool; revealed tools are only
// appended, so a prompt cache survives. A Sampler answers the server's
// sampling/createMessage through a model's API.
//
// The typed adapters for the providers' Go SDKs live in their own module,
// so this package adds nothing to the library's go.mod.
package llm

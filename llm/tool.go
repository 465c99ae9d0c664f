package llm

import (
	"bytes"
	"encoding/json"

	"github.com/anymcp/anymcp/mcp"
)

// Tool is one MCP tool made ready for a provider: its definition in the
// provider's wire form, and the report of what the conversion did.
type Tool struct {
	// Name is the name given to the model: a fleet name or the server's.
	// The model calls the tool by it.
	Name string
	// Original is the tool as the server sent it. Its input schema is the
	// truth that Arguments checks against.
	Original mcp.Tool
	// Target is what the tool was converted for.
	Target Target
	// Mode says how the tool reaches the model: strict, loose or omitted.
	Mode Mode
	// Definition is the provider's tool object exactly as its request
	// takes it (see RequestTools for the array around it); nil when the
	// tool is omitted.
	Definition json.RawMessage
	// Changes lists what the conversion changed, moved or dropped, and
	// why; empty when the schema went as the server sent it.
	Changes []Change
}

// Report is a tool's report as JSON: the name given to the model, the
// server's name, the mode and the changes.
type Report struct {
	Name    string   `json:"name"`
	Tool    string   `json:"tool"`
	Mode    Mode     `json:"mode"`
	Changes []Change `json:"changes,omitempty"`
}

// Report returns the tool's report.
func (t *Tool) Report() Report {
	return Report{Name: t.Name, Tool: t.Original.Name, Mode: t.Mode, Changes: t.Changes}
}

// Convert converts one tool for a target. name is the name to give the
// model (a fleet name, or t.Name); it is fitted to the target's rules and
// the report says so when it changes. The result never holds a definition
// the target's documented rules refuse (Check): a tool that cannot be made
// valid is returned with Mode ModeOmitted and a nil Definition.
func Convert(name string, t mcp.Tool, target Target) Tool {
	return convert(name, t, target)
}

// ConvertAll converts a tool set for a target, keeping the names given to
// the model unique once fitted to the target. names[i] is the name for
// tools[i]; a nil names uses each tool's own name. The result is in the
// order of tools, one Tool each, omitted ones included.
func ConvertAll(names []string, tools []mcp.Tool, target Target) []Tool {
	out := make([]Tool, len(tools))
	used := make(map[string]bool, len(tools))
	for i, t := range tools {
		name := t.Name
		if names != nil && i < len(names) {
			name = names[i]
		}
		out[i] = convert(uniqueName(name, target, used), t, target)
		if out[i].Name != name {
			out[i].Changes = append([]Change{{Action: Renamed, Why: renameWhy(name, out[i].Name)}}, withoutRename(out[i].Changes)...)
		}
		used[out[i].Name] = true
	}
	return out
}

// RequestTools returns the JSON value the provider's request takes as its
// tools: an array of the definitions, in order, omitted tools left out;
// for Gemini, the declarations wrapped as [{"functionDeclarations":[...]}].
// A set with no definition gives "[]".
func RequestTools(target Target, tools []Tool) json.RawMessage {
	var b bytes.Buffer
	gemini := target.Provider == Gemini || target.Provider == GeminiOpenAPI
	n := 0
	for i := range tools {
		if tools[i].Definition == nil {
			continue
		}
		if n == 0 && gemini {
			b.WriteString(`[{"functionDeclarations":[`)
		} else if n == 0 {
			b.WriteByte('[')
		} else {
			b.WriteByte(',')
		}
		b.Write(tools[i].Definition)
		n++
	}
	switch {
	case n == 0:
		return json.RawMessage("[]")
	case gemini:
		b.WriteString("]}]")
	default:
		b.WriteByte(']')
	}
	return b.Bytes()
}

package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/testservers"
)

// exportDoc is tools export's output.
type exportDoc struct {
	Tools  []map[string]any `json:"tools"`
	Report []struct {
		Name string `json:"name"`
		Tool string `json:"tool"`
		Mode string `json:"mode"`
	} `json:"report"`
}

func isObject(v any) bool { _, ok := v.(map[string]any); return ok }

// shapeErr checks one tool object against its provider's shape and
// returns its name, or why it is not of that shape.
func shapeErr(format string, tl map[string]any) (string, string) {
	switch format {
	case "openai", "openai-compatible":
		fn, _ := tl["function"].(map[string]any)
		name, _ := fn["name"].(string)
		if tl["type"] != "function" || name == "" || !isObject(fn["parameters"]) || len(tl) != 2 {
			return "", "not {type: function, function: {name, parameters}}"
		}
		return name, ""
	case "openai-responses":
		name, _ := tl["name"].(string)
		if _, ok := tl["strict"].(bool); tl["type"] != "function" || name == "" || !isObject(tl["parameters"]) || !ok {
			return "", "not {type: function, name, parameters, strict}"
		}
		return name, ""
	case "anthropic":
		name, _ := tl["name"].(string)
		if name == "" || !isObject(tl["input_schema"]) || tl["type"] != nil {
			return "", "not {name, input_schema}"
		}
		return name, ""
	case "gemini", "gemini-openapi":
		key := map[string]string{"gemini": "parametersJsonSchema", "gemini-openapi": "parameters"}[format]
		name, _ := tl["name"].(string)
		if p, ok := tl[key]; name == "" || (ok && !isObject(p)) || (format == "gemini" && !ok) {
			return "", "not {name, " + key + "}"
		}
		return name, ""
	}
	return "", "unknown format"
}

// TestToolsExport: for each format, the document's tools are the
// provider's tool objects, one per server tool and in the report, and
// the exit status is 0 when every tool goes as asked.
func TestToolsExport(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	listed := newRunner(t).runOK("tools", "list", "--json", srv.URL)
	var list struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal([]byte(listed.stdout), &list); err != nil || len(list.Tools) < 5 {
		t.Fatalf("tools list: %v %s", err, listed.stdout)
	}
	for _, format := range []string{"openai", "openai-responses", "anthropic", "gemini", "gemini-openapi", "openai-compatible"} {
		res := newRunner(t).run("tools", "export", "--format", format, srv.URL)
		if res.code != exitOK {
			t.Errorf("%s: exit %d\n%s", format, res.code, res.stderr)
			continue
		}
		var doc exportDoc
		if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
			t.Fatalf("%s: %v\n%s", format, err, res.stdout)
		}
		tools := doc.Tools
		if strings.HasPrefix(format, "gemini") {
			if len(tools) != 1 || len(tools[0]) != 1 {
				t.Fatalf("%s: tools %v, want one {functionDeclarations}", format, tools)
			}
			decls, _ := tools[0]["functionDeclarations"].([]any)
			tools = nil
			for _, d := range decls {
				m, _ := d.(map[string]any)
				tools = append(tools, m)
			}
		}
		if len(tools) != len(list.Tools) || len(doc.Report) != len(list.Tools) {
			t.Errorf("%s: %d tools, %d reports, for %d server tools", format, len(tools), len(doc.Report), len(list.Tools))
			continue
		}
		for i, tl := range tools {
			name, why := shapeErr(format, tl)
			if why != "" || name != list.Tools[i].Name || doc.Report[i].Name != name || doc.Report[i].Mode != "loose" {
				t.Errorf("%s: tool %d %v: %s; report %+v", format, i, tl, why, doc.Report[i])
			}
		}
	}
}

// TestToolsExportStrict: with --strict, a tool that cannot be made strict
// is sent loose, the report says so, and the exit status is 1; the tools
// that can are strict. Without --strict, the same server exits 0.
func TestToolsExportStrict(t *testing.T) {
	url, _ := rawServer(t, `[
		{"name":"plain","inputSchema":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}},
		{"name":"tags","inputSchema":{"type":"object","properties":{"tags":{"type":"object","additionalProperties":{"type":"string"}}}}}]`, `{"content":[]}`)
	res := newRunner(t).run("tools", "export", "--format", "openai", "--strict", url)
	var doc exportDoc
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, res.stdout)
	}
	if res.code != exitToolError || len(doc.Report) != 2 || doc.Report[0].Mode != "strict" || doc.Report[1].Mode != "loose" ||
		!strings.Contains(res.stderr, "1 of 2 tools not represented as asked") || !strings.Contains(res.stderr, "tags (loose)") {
		t.Errorf("--strict: exit %d, report %+v\nstderr %s", res.code, doc.Report, res.stderr)
	}
	if fn, _ := doc.Tools[0]["function"].(map[string]any); fn["strict"] != true {
		t.Errorf("the strict tool: %v", doc.Tools[0])
	}
	res = newRunner(t).run("tools", "export", "--format", "openai", url)
	if res.code != exitOK {
		t.Errorf("without --strict: exit %d\n%s", res.code, res.stderr)
	}
}

// TestToolsExportBudget: over --max-tokens, the tools are the three
// meta-tools, the report still lists every server tool, and a warning
// says so; a bad --format is a usage error.
func TestToolsExportBudget(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	res := newRunner(t).run("tools", "export", "--format", "anthropic", "--max-tokens", "300", srv.URL)
	var doc exportDoc
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil || res.code != exitOK {
		t.Fatalf("exit %d, %v\n%s", res.code, err, res.stderr)
	}
	var names []string
	for _, tl := range doc.Tools {
		n, _ := tl["name"].(string)
		names = append(names, n)
	}
	if strings.Join(names, ",") != "search_tools,describe_tool,call_tool" || len(doc.Report) < 5 || !strings.Contains(res.stderr, "over the budget") {
		t.Errorf("tools %v, %d reports\nstderr %s", names, len(doc.Report), res.stderr)
	}
	res = newRunner(t).run("tools", "export", "--format", "bard", srv.URL)
	if res.code != exitUsage || !strings.Contains(res.stderr, "want one of openai, openai-responses") {
		t.Errorf("bad format: exit %d\n%s", res.code, res.stderr)
	}
}

// TestToolsExportAll: --all exports a fleet's tools under their fleet
// names.
func TestToolsExportAll(t *testing.T) {
	srv := testservers.StartStreamable(testservers.HTTPOptions{})
	defer srv.Close()
	config := writeFile(t, filepath.Join(t.TempDir(), "mcp.json"), `{"mcpServers": {"calc": {"type": "http", "url": "`+srv.URL+`"}}}`)
	res := newRunner(t).run("tools", "export", "--format", "openai-responses", "--all", "--config", config, "--connect-timeout", fleetTimeout)
	var doc exportDoc
	if err := json.Unmarshal([]byte(res.stdout), &doc); err != nil || res.code != exitOK {
		t.Fatalf("exit %d, %v\n%s", res.code, err, res.stderr)
	}
	found := false
	for i, tl := range doc.Tools {
		name, why := shapeErr("openai-responses", tl)
		if why != "" || !strings.HasPrefix(name, "calc__") || doc.Report[i].Name != name {
			t.Errorf("tool %v: %s, report %+v", tl, why, doc.Report[i])
		}
		found = found || (name == "calc__add" && doc.Report[i].Tool == "add")
	}
	if !found {
		t.Errorf("no calc__add in %s", res.stdout)
	}
}

package mcp

import (
	"encoding/json"
	"testing"
)

func TestContentsAcceptsOneOrMany(t *testing.T) {
	var one, many Contents
	if err := json.Unmarshal([]byte(`{"type":"text","text":"hi"}`), &one); err != nil || len(one) != 1 || one[0].Text != "hi" {
		t.Fatalf("single block: %v %+v", err, one)
	}
	if err := json.Unmarshal([]byte(`[{"type":"text","text":"a"},{"type":"image","data":"AA==","mimeType":"image/png"}]`), &many); err != nil || len(many) != 2 || many[1].MimeType != "image/png" {
		t.Fatalf("array: %v %+v", err, many)
	}
	b, _ := json.Marshal(one)
	if string(b) != `{"type":"text","text":"hi"}` {
		t.Errorf("one block is written as an object: %s", b)
	}
	b, _ = json.Marshal(many)
	if b[0] != '[' {
		t.Errorf("several blocks are written as an array: %s", b)
	}
	if err := json.Unmarshal([]byte(`"text"`), &one); err == nil {
		t.Error("a string is not content")
	}
}

func TestResultsKeepEveryContentTypeAndIgnoreUnknownFields(t *testing.T) {
	raw := `{"content":[
		{"type":"text","text":"t","annotations":{"audience":["user"],"priority":0.5}},
		{"type":"image","data":"iVBO","mimeType":"image/png"},
		{"type":"audio","data":"UklG","mimeType":"audio/wav"},
		{"type":"resource_link","uri":"file:///a","name":"a","size":12},
		{"type":"resource","resource":{"uri":"file:///b","text":"inside","mimeType":"text/plain"}},
		{"type":"future_kind","text":"kept","brandNew":true}
	],"structuredContent":{"n":1},"isError":false,"ttlMs":5000,"_meta":{"k":"v"}}`
	var r CallToolResult
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Content) != 6 || r.Content[3].Size == nil || *r.Content[3].Size != 12 || r.Content[4].Resource.Text != "inside" ||
		r.Content[5].Type != "future_kind" || *r.Content[0].Annotations.Priority != 0.5 || string(r.StructuredContent) != `{"n":1}` || r.Meta["k"] != "v" {
		t.Errorf("decoded %+v", r)
	}
}

func TestVersions(t *testing.T) {
	for _, v := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		if !IsInitializeVersion(v) {
			t.Errorf("%s should be supported", v)
		}
	}
	if IsInitializeVersion("2026-07-28") || IsInitializeVersion("") {
		t.Error("unsupported revision accepted")
	}
	if LatestInitializeVersion != "2025-11-25" {
		t.Errorf("latest %s", LatestInitializeVersion)
	}
}

// Tool schemas are kept byte for byte (JSON Schema 2020-12: $ref is not
// dereferenced, no keyword is dropped or reordered).
func TestSchemasKeptVerbatim(t *testing.T) {
	schema := `{"$schema":"https://json-schema.org/draft/2020-12/schema",  "$defs":{"a":{"$anchor":"A","type":"string"}},
		"type":"object","properties":{"x":{"$ref":"https://example.com/remote.json"},"y":{"$ref":"#A"}},
		"additionalProperties":false,"if":{"required":["x"]},"then":{"required":["y"]}}`
	out := `{"type":"object","properties":{"n":{"type":"number"}},"unknownKeyword":[1,2,{"z":null}]}`
	var r ListToolsResult
	if err := json.Unmarshal([]byte(`{"tools":[{"name":"t","inputSchema":`+schema+`,"outputSchema":`+out+`}]}`), &r); err != nil {
		t.Fatal(err)
	}
	if string(r.Tools[0].InputSchema) != schema || string(r.Tools[0].OutputSchema) != out {
		t.Errorf("schemas changed:\n%s\n%s", r.Tools[0].InputSchema, r.Tools[0].OutputSchema)
	}
}

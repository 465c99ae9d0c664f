package llm

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/jsonschema"
	"github.com/anymcp/anymcp/mcp"
)

// FuzzConvert: any input schema, for every target, converts without a
// panic, in bounded time, to a definition that passes the target's
// checker, or to an omitted tool that says why.
func FuzzConvert(f *testing.F) {
	for _, ct := range loadCorpus(f) {
		f.Add(ct.tool.Name, []byte(ct.tool.InputSchema))
	}
	f.Add("deep", []byte(strings.Repeat(`{"anyOf":[`, 500)+strings.Repeat(`]}`, 500)))
	f.Add("fan", []byte(`{"type":"object","properties":{"a":{"$ref":"#/$defs/d"}},"$defs":{"d":{"type":"object","properties":{"x":{"$ref":"#/$defs/e"},"y":{"$ref":"#/$defs/e"}}},"e":{"type":"object","properties":{"x":{"$ref":"#/$defs/d"},"y":{"$ref":"#/$defs/d"}}}}}`))
	f.Fuzz(func(t *testing.T, name string, schema []byte) {
		tool := mcp.Tool{Name: name, Description: "d", InputSchema: json.RawMessage(schema)}
		for _, target := range allTargets {
			start := time.Now()
			got := Convert(name, tool, target)
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("%v: conversion took %v", target, d)
			}
			switch got.Mode {
			case ModeOmitted:
				if got.Definition != nil || !hasAction(got.Changes, Omitted) {
					t.Fatalf("%v: omitted without saying why", target)
				}
			case ModeStrict, ModeLoose:
				if err := Check(Target{target.Provider, got.Mode == ModeStrict}, got.Definition); err != nil {
					t.Fatalf("%v: %v\n%s", target, err, got.Definition)
				}
			default:
				t.Fatalf("%v: mode %q", target, got.Mode)
			}
		}
	})
}

// FuzzArguments: any arguments, for any schema, are shaped without a
// panic; arguments accepted always pass the original schema.
func FuzzArguments(f *testing.F) {
	seeds := [][2]string{
		{`{"type":"object","properties":{"q":{"type":"string"},"n":{"type":"integer"}},"required":["q"]}`, `{"q":"x","n":null}`},
		{`{"type":"object","properties":{"o":{"type":"object","properties":{"a":{"type":"boolean"}}}}}`, `{"o":"{\"a\":true}"}`},
		{`{"type":"object","properties":{"l":{"type":"array","items":{"type":"object"}}}}`, `{"l":["{}","[1]",null]}`},
		{`{"type":"object","properties":{"x":{"anyOf":[{"type":"string"},{"type":"null"}]}}}`, `{"x":null}`},
		{`{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"object"}}}}`, `{"m":{"k":"{\"a\":1}","j":null}}`},
		{`{"type":"object","properties":{"t":{"$ref":"#"}}}`, `{"t":{"t":"{\"t\":null}"}}`},
		{`{}`, `"{\"a\":1}"`},
	}
	for _, s := range seeds {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, schema, args []byte) {
		tool := Tool{Name: "t", Original: mcp.Tool{Name: "t", InputSchema: json.RawMessage(schema)}}
		shaped, err := tool.Shape(args)
		if err != nil {
			if _, ok := err.(*ArgumentError); !ok {
				t.Fatalf("error %T, want *ArgumentError", err)
			}
			return
		}
		dec := json.NewDecoder(bytes.NewReader(shaped.Arguments))
		dec.UseNumber()
		var v map[string]any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("accepted arguments are not a JSON object: %s", shaped.Arguments)
		}
		if problems := jsonschema.Parse(schema).Validate(v); len(problems) > 0 {
			t.Fatalf("accepted arguments fail the schema: %+v\n%s", problems, shaped.Arguments)
		}
	})
}

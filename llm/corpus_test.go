package llm

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/mcp"
)

// corpusTool is one tool of the test corpus and where it comes from.
type corpusTool struct {
	server string
	tool   mcp.Tool
}

// loadCorpus reads llm/testdata: the real servers' tools/list outputs and
// the hand-written hard schemas.
func loadCorpus(t testing.TB) []corpusTool {
	t.Helper()
	var real struct {
		Servers []struct {
			Server string     `json:"server"`
			Tools  []mcp.Tool `json:"tools"`
		} `json:"servers"`
	}
	var hard struct {
		Tools []mcp.Tool `json:"tools"`
	}
	for file, v := range map[string]any{"testdata/servers.json": &real, "testdata/hard.json": &hard} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	var out []corpusTool
	for _, s := range real.Servers {
		for _, tl := range s.Tools {
			out = append(out, corpusTool{s.Server, tl})
		}
	}
	for _, tl := range hard.Tools {
		out = append(out, corpusTool{"hard", tl})
	}
	return out
}

var allTargets = func() []Target {
	var out []Target
	for _, p := range []Provider{OpenAIChat, OpenAIResponses, Anthropic, Gemini, GeminiOpenAPI, OpenAICompatible} {
		out = append(out, Target{p, false}, Target{p, true})
	}
	return out
}()

// asIs is a tool's definition with its schema copied unchanged, as most
// hosts send it: what the "before" counts judge.
func asIs(target Target, t mcp.Tool) json.RawMessage {
	var params map[string]any
	dec := json.NewDecoder(bytes.NewReader(t.InputSchema))
	dec.UseNumber()
	_ = dec.Decode(&params)
	strict := target.Strict && rulesFor(target.Provider).strict != nil
	def, _ := wrap(target, t.Name, t.Description, params, strict)
	return def
}

// TestCorpus converts every tool of the corpus for every target, strict
// and loose: each definition passes the target's checker, or the tool is
// reported omitted or fallen back with a reason. It logs the counts
// before (schemas as sent, judged by the same checker) and after.
func TestCorpus(t *testing.T) {
	corpus := loadCorpus(t)
	var table strings.Builder
	fmt.Fprintf(&table, "\n| target | real: as-is accepted | real: strict / loose / omitted | all: as-is accepted | all: strict / loose / omitted |\n|---|---|---|---|---|\n")
	for _, target := range allTargets {
		var before, strict, loose, omitted int
		var realBefore int
		realCount := map[Mode]int{}
		names := make([]string, len(corpus))
		tools := make([]mcp.Tool, len(corpus))
		for i, ct := range corpus {
			names[i], tools[i] = ct.tool.Name, ct.tool
			if Check(target, asIs(target, ct.tool)) == nil && (!target.Strict || rulesFor(target.Provider).strict != nil) {
				before++
				if ct.server != "hard" {
					realBefore++
				}
			}
		}
		seen := map[string]bool{}
		for i, got := range ConvertAll(names, tools, target) {
			where := fmt.Sprintf("%v %s/%s", target, corpus[i].server, corpus[i].tool.Name)
			if seen[got.Name] {
				t.Errorf("%s: name %q given twice", where, got.Name)
			}
			seen[got.Name] = true
			if corpus[i].server != "hard" {
				realCount[got.Mode]++
			}
			switch got.Mode {
			case ModeStrict:
				strict++
				if !target.Strict {
					t.Errorf("%s: strict though loose was asked", where)
				}
			case ModeLoose:
				loose++
				if simple[corpus[i].server] && target.Strict && rulesFor(target.Provider).strict != nil {
					t.Errorf("%s: a plain schema not made strict: %+v", where, got.Changes)
				}
				if target.Strict && !hasAction(got.Changes, FellBack) {
					t.Errorf("%s: loose without a fell-back change: %+v", where, got.Changes)
				}
			case ModeOmitted:
				omitted++
				if corpus[i].tool.Name != "string_root" {
					t.Errorf("%s: omitted, though a valid definition can be made: %+v", where, got.Changes)
				}
				if got.Definition != nil || !hasAction(got.Changes, Omitted) {
					t.Errorf("%s: omitted without saying why, or with a definition", where)
				}
				continue
			}
			if err := Check(Target{target.Provider, got.Mode == ModeStrict}, got.Definition); err != nil {
				t.Errorf("%s: the definition fails the checker: %v\n%s", where, err, got.Definition)
			}
			for _, c := range got.Changes {
				if c.Why == "" || c.Action == "" {
					t.Errorf("%s: a change without a reason: %+v", where, c)
				}
			}
		}
		fmt.Fprintf(&table, "| %s%s | %d | %d / %d / %d | %d | %d / %d / %d |\n", target.Provider, map[bool]string{true: " strict"}[target.Strict],
			realBefore, realCount[ModeStrict], realCount[ModeLoose], realCount[ModeOmitted], before, strict, loose, omitted)
	}
	t.Logf("corpus of %d tools:%s", len(corpus), table.String())
}

// simple are the servers whose schemas hold nothing strict mode cannot
// express: each of their tools must come out strict where asked.
var simple = map[string]bool{"testservers (this repository)": true, "server-everything": true, "server-memory": true, "server-filesystem": true}

func hasAction(changes []Change, a Action) bool {
	for _, c := range changes {
		if c.Action == a {
			return true
		}
	}
	return false
}

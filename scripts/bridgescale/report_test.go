package main

import (
	"errors"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/scripts/internal/scaleout"
	"github.com/anymcp/anymcp/testservers"
)

// A clean run passes; each broken promise is a violation of its own.
func TestReportCheck(t *testing.T) {
	clean := func() *report {
		return &report{
			victim: "b1",
			calls: []callRecord{
				{key: "k0", outcome: scaleout.Succeeded, text: "k0 executed 1 time(s)"},
				{key: "k1", outcome: scaleout.MayHaveRun, err: jsonrpc.ErrOutcomeUnknown, afterKill: true},
				{key: "k2", outcome: scaleout.Succeeded, text: "k2 executed 1 time(s)", afterKill: true},
			},
			rounds:   []roundRecord{{id: "r0", ok: true, legs: legs{"b0", "b2"}}, {id: "r1", ok: true, legs: legs{"b2", "b2"}}},
			pinned:   []roundRecord{{id: "p0", ok: true, legs: legs{"b0", "b2"}}},
			sessions: []sessionRecord{{name: "s0/mcp", calls: 21, replicas: []string{"b2"}}},
		}
	}
	r := clean()
	r.check()
	if len(r.violations) != 0 {
		t.Fatalf("a clean run: violations %q", r.violations)
	}
	for _, tc := range []struct {
		name  string
		spoil func(*report)
		want  string
	}{
		{"untyped", func(r *report) { r.calls[1] = callRecord{key: "k1", outcome: scaleout.Untyped, err: errors.New("eof")} }, "failed untyped"},
		{"ran twice", func(r *report) { r.calls[0].text = "k0 executed 2 time(s)" }, "answered"},
		{"duplicates", func(r *report) { r.stats = testservers.Stats{Duplicates: 1, DuplicateKeys: []string{"k0"}} }, "twice"},
		{"nothing after the kill", func(r *report) { r.calls[2].outcome = scaleout.MayHaveRun }, "after b1 was killed"},
		{"no crossed round", func(r *report) { r.rounds[0].legs.retry = "b0" }, "on two bridges"},
		{"no round trip", func(r *report) { r.rounds[1].legs.retry = "" }, "without an input_required round"},
		{"pinned failed", func(r *report) { r.pinned[0].outcome = scaleout.MayHaveRun }, "pinned round p0"},
		{"session failed", func(r *report) { r.sessions[0].err = errors.New("404") }, "session s0/mcp failed"},
		{"session moved", func(r *report) { r.sessions[0].replicas = []string{"b0", "b2"} }, "must stick to one"},
		{"wrong answer", func(r *report) { r.rounds[1].ok = false; r.rounds[1].err = errors.New("bad") }, "round r1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := clean()
			tc.spoil(r)
			r.check()
			if len(r.violations) != 1 || !strings.Contains(r.violations[0], tc.want) {
				t.Fatalf("violations %q, want one containing %q", r.violations, tc.want)
			}
		})
	}
}

func TestRoundOf(t *testing.T) {
	first := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"elicit","arguments":{"message":"r7"}}}`
	retry := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"elicit","arguments":{"message":"r7"},"inputResponses":{"elicit":{}},"requestState":"x"}}`
	other := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"once","arguments":{"key":"k"}}}`
	if id, retried := roundOf([]byte(first)); id != "r7" || retried {
		t.Errorf("first leg: %q %v", id, retried)
	}
	if id, retried := roundOf([]byte(retry)); id != "r7" || !retried {
		t.Errorf("retry leg: %q %v", id, retried)
	}
	if id, _ := roundOf([]byte(other)); id != "" {
		t.Errorf("another tool: %q", id)
	}
}

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
			replicas: 3, victim: "b1", killed: true, killAfter: 12,
			spread: []replicaCount{{"b0", 5}, {"b1", 2}, {"b2", 5}},
			calls: []callRecord{
				{key: "k0", outcome: scaleout.Succeeded, text: "k0 executed 1 time(s)"},
				{key: "k1", outcome: scaleout.MayHaveRun, err: jsonrpc.ErrOutcomeUnknown, afterKill: true},
				{key: "k2", outcome: scaleout.Succeeded, text: "k2 executed 1 time(s)", afterKill: true},
			},
			sessions: []sessionRecord{
				{name: "s0", echoes: 2, replicas: []string{"b0"}, calls: []callRecord{{key: "s0-1", outcome: scaleout.Succeeded, text: "s0-1 executed 1 time(s)"}}},
				{name: "s1", replicas: []string{"b1"}, outcome: scaleout.DidNotRun, err: jsonrpc.ErrSessionExpired},
				{name: "s2", echoes: 1, replicas: []string{"b2"}},
				{name: "s3", echoes: 1, replicas: []string{"b1", "b0"}}, // its replica killed, it started again
			},
			sessionStats: testservers.Stats{SessionsCreated: 5},
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
		{"not killed", func(r *report) { r.killed = false }, "never killed"},
		{"no spread", func(r *report) { r.spread = r.spread[:2] }, "replica b2 answered 0"},
		{"untyped", func(r *report) { r.calls[1] = callRecord{key: "k1", outcome: scaleout.Untyped, err: errors.New("eof")} }, "failed untyped"},
		{"ran twice", func(r *report) { r.calls[0].text = "k0 executed 2 time(s)" }, "answered"},
		{"session call ran twice", func(r *report) { r.sessions[0].calls[0].text = "s0-1 executed 2 time(s)" }, "call s0-1 answered"},
		{"duplicates", func(r *report) { r.stats = testservers.Stats{Duplicates: 1, DuplicateKeys: []string{"k0"}} }, "twice"},
		{"nothing after the kill", func(r *report) { r.calls[2].outcome = scaleout.MayHaveRun }, "after b1 was killed"},
		{"session moved", func(r *report) { r.sessions[0].replicas = []string{"b0", "b2"} }, "moved from b0"},
		{"failed session moved", func(r *report) { r.sessions[1].replicas = []string{"b0", "b1"} }, "moved from b0"},
		{"session failed alive", func(r *report) { r.sessions[0].err, r.sessions[0].outcome = errors.New("404"), scaleout.DidNotRun }, "though its replica lived"},
		{"session untyped", func(r *report) { r.sessions[1].outcome = scaleout.Untyped }, "session s1 failed untyped"},
		{"one upstream session per call", func(r *report) { r.sessionStats.SessionsCreated = 40 }, "sessions opened"},
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

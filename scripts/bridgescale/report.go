package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/anymcp/anymcp/scripts/internal/scaleout"
	"github.com/anymcp/anymcp/testservers"
)

// report is what a run saw, and what of it breaks a promise.
type report struct {
	replicas   int
	victim     string
	killAfter  int
	calls      []callRecord
	rounds     []roundRecord
	pinned     []roundRecord
	sessions   []sessionRecord
	stats      testservers.Stats
	violations []string
}

func (r *report) violate(format string, a ...any) {
	r.violations = append(r.violations, fmt.Sprintf(format, a...))
}

// maxListed bounds the violations of one kind a report lists one by one.
const maxListed = 10

// check holds the calls and rounds to the promises.
func (r *report) check() {
	listed := 0
	for _, c := range r.calls {
		switch c.outcome {
		case scaleout.Untyped:
			if listed++; listed <= maxListed {
				r.violate("call %s failed untyped: %v", c.key, c.err)
			}
		case scaleout.Succeeded:
			if want := c.key + " executed 1 time(s)"; c.text != want {
				r.violate("call %s answered %q, want %q", c.key, c.text, want)
			}
		}
	}
	if r.stats.Duplicates != 0 {
		r.violate("%d executions ran a key twice: %v", r.stats.Duplicates, r.stats.DuplicateKeys)
	}
	if _, ok, _ := r.tally(r.calls, true); ok == 0 {
		r.violate("no call succeeded after %s was killed", r.victim)
	}
	for _, set := range []struct {
		name   string
		rounds []roundRecord
		pinned bool
	}{{"round", r.rounds, false}, {"pinned round", r.pinned, true}} {
		for _, rd := range set.rounds {
			switch {
			case rd.outcome == scaleout.Untyped:
				r.violate("%s %s failed untyped: %v", set.name, rd.id, rd.err)
			case rd.outcome == scaleout.Succeeded && !rd.ok:
				r.violate("%s %s: %v", set.name, rd.id, rd.err)
			case set.pinned && rd.outcome != scaleout.Succeeded:
				// Both bridges are alive: nothing excuses a failure.
				r.violate("%s %s (%s then %s) failed: %v", set.name, rd.id, rd.legs.first, rd.legs.retry, rd.err)
			case rd.outcome == scaleout.Succeeded && rd.legs.retry == "":
				r.violate("%s %s completed without an input_required round (the retry leg was never seen)", set.name, rd.id)
			}
		}
	}
	for _, s := range r.sessions {
		if s.err != nil {
			r.violate("session %s failed after %d calls (on %v): %v", s.name, s.calls, s.replicas, s.err)
		}
		if len(s.replicas) != 1 {
			r.violate("session %s was served by %d bridges (%v): it must stick to one", s.name, len(s.replicas), s.replicas)
		}
	}
	if r.crossed(r.rounds) == 0 && len(r.rounds) > 0 {
		r.violate("no round through HAProxy completed with its legs on two bridges")
	}
}

// tally counts calls by outcome; with afterKill, only the calls that
// started after the kill.
func (r *report) tally(calls []callRecord, afterKill bool) (n, ok int, by map[scaleout.Outcome]int) {
	by = map[scaleout.Outcome]int{}
	for _, c := range calls {
		if afterKill && !c.afterKill {
			continue
		}
		n++
		by[c.outcome]++
	}
	return n, by[scaleout.Succeeded], by
}

// crossed counts the rounds that completed with their legs on two bridges.
func (r *report) crossed(rounds []roundRecord) int {
	n := 0
	for _, rd := range rounds {
		if rd.outcome == scaleout.Succeeded && rd.ok && rd.legs.first != "" && rd.legs.retry != "" && rd.legs.first != rd.legs.retry {
			n++
		}
	}
	return n
}

func (r *report) print(w io.Writer) {
	n, ok, by := r.tally(r.calls, false)
	na, oka, _ := r.tally(r.calls, true)
	fmt.Fprintf(w, "bridge-scaleout: %d bridges behind HAProxy, %s killed (SIGKILL) after %d calls had ended\n", r.replicas, r.victim, r.killAfter)
	fmt.Fprintf(w, "calls: %d, succeeded %d, failed typed %d (may have run %d, did not run %d), untyped %d; after the kill: %d of %d succeeded\n",
		n, ok, by[scaleout.MayHaveRun]+by[scaleout.DidNotRun], by[scaleout.MayHaveRun], by[scaleout.DidNotRun], by[scaleout.Untyped], oka, na)
	fmt.Fprintf(w, "upstream: %d executions, %d duplicates\n", r.stats.Executions, r.stats.Duplicates)
	rounds := func(name string, rs []roundRecord) {
		done, typed := 0, 0
		for _, rd := range rs {
			switch {
			case rd.outcome == scaleout.Succeeded && rd.ok:
				done++
			case rd.outcome == scaleout.MayHaveRun || rd.outcome == scaleout.DidNotRun:
				typed++
			}
		}
		fmt.Fprintf(w, "%s: %d, completed %d (across two bridges %d), failed typed %d\n", name, len(rs), done, r.crossed(rs), typed)
	}
	rounds("input_required rounds through HAProxy", r.rounds)
	rounds("input_required rounds pinned to two bridges", r.pinned)
	if len(r.sessions) > 0 {
		done, calls := 0, 0
		for _, s := range r.sessions {
			calls += s.calls
			if s.err == nil && len(s.replicas) == 1 {
				done++
			}
		}
		fmt.Fprintf(w, "initialize-era clients through HAProxy (sticky): %d, completed on one bridge each %d, calls and elicitations succeeded %d\n", len(r.sessions), done, calls)
	}
	if len(r.violations) == 0 {
		fmt.Fprintln(w, "PASS")
		return
	}
	fmt.Fprintf(w, "FAIL: %d violation(s):\n  %s\n", len(r.violations), strings.Join(r.violations, "\n  "))
}

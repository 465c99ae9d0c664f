package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/anymcp/anymcp/scripts/internal/scaleout"
	"github.com/anymcp/anymcp/testservers"
)

// replicaCount is how many stateless responses one replica gave.
type replicaCount struct {
	name string
	n    int
}

// report is what a run saw, and what of it breaks a promise.
type report struct {
	replicas     int
	victim       string
	killed       bool
	killAfter    int
	calls        []callRecord
	sessions     []sessionRecord
	spread       []replicaCount
	stats        testservers.Stats // the stateless upstream's
	sessionStats testservers.Stats // the session upstream's
	violations   []string
}

func (r *report) violate(format string, a ...any) {
	r.violations = append(r.violations, fmt.Sprintf(format, a...))
}

// maxListed bounds the violations of one kind listed one by one.
const maxListed = 10

// allCalls are the stateless calls and the sessions' calls of once.
func (r *report) allCalls() []callRecord {
	out := slices.Clone(r.calls)
	for _, s := range r.sessions {
		out = append(out, s.calls...)
	}
	return out
}

// minShare is the fewest stateless responses each replica must give:
// half its share of the calls made before the kill.
func (r *report) minShare() int {
	return max(1, r.killAfter/(2*max(1, r.replicas)))
}

// check holds the run to the promises.
func (r *report) check() {
	if !r.killed {
		r.violate("replica %s was never killed (fewer than %d calls ended)", r.victim, r.killAfter)
	}
	for i := range r.replicas {
		name := scaleout.ReplicaName(i)
		n := 0
		for _, c := range r.spread {
			if c.name == name {
				n = c.n
			}
		}
		if n < r.minShare() {
			r.violate("replica %s answered %d stateless requests, fewer than %d: stateless calls did not spread", name, n, r.minShare())
		}
	}
	listed := 0
	for _, c := range r.allCalls() {
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
	afterKill := 0
	for _, c := range r.calls {
		if c.afterKill && c.outcome == scaleout.Succeeded {
			afterKill++
		}
	}
	if afterKill == 0 {
		r.violate("no stateless call succeeded after %s was killed", r.victim)
	}
	completed := 0
	for _, s := range r.sessions {
		onVictim := slices.Contains(s.replicas, r.victim)
		moved := len(s.replicas) > 1
		switch {
		case moved && s.replicas[0] != r.victim:
			r.violate("session %s moved from %s, which lived, to %v: it must stick to one replica", s.name, s.replicas[0], s.replicas[1:])
		case s.err == nil:
			// On one replica, or started again on another once its
			// own was killed (the client's new session after a 404).
			completed++
		case s.outcome == scaleout.Untyped:
			r.violate("session %s failed untyped (on %v): %v", s.name, s.replicas, s.err)
		case !onVictim:
			r.violate("session %s failed though its replica lived (on %v): %v", s.name, s.replicas, s.err)
		}
	}
	if len(r.sessions) > 0 && completed == 0 {
		r.violate("no session completed")
	}
	// One upstream session per downstream session (and per replica's
	// shared fleet), never one per call.
	if bound := 2*len(r.sessions) + r.replicas; r.sessionStats.SessionsCreated > bound {
		r.violate("the session server saw %d sessions opened, more than %d for %d downstream sessions", r.sessionStats.SessionsCreated, bound, len(r.sessions))
	}
}

func (r *report) print(w io.Writer) {
	by := map[scaleout.Outcome]int{}
	okAfter, after := 0, 0
	for _, c := range r.calls {
		by[c.outcome]++
		if c.afterKill {
			after++
			if c.outcome == scaleout.Succeeded {
				okAfter++
			}
		}
	}
	fmt.Fprintf(w, "gateway-scaleout: %d gateways behind HAProxy, %s killed (SIGKILL) after %d stateless calls had ended\n", r.replicas, r.victim, r.killAfter)
	spread := make([]string, len(r.spread))
	for i, c := range r.spread {
		spread[i] = fmt.Sprintf("%s %d", c.name, c.n)
	}
	fmt.Fprintf(w, "stateless responses by replica: %s (each must give %d or more)\n", strings.Join(spread, ", "), r.minShare())
	fmt.Fprintf(w, "stateless calls: %d, succeeded %d, failed typed %d (may have run %d, did not run %d), untyped %d; after the kill: %d of %d succeeded\n",
		len(r.calls), by[scaleout.Succeeded], by[scaleout.MayHaveRun]+by[scaleout.DidNotRun], by[scaleout.MayHaveRun], by[scaleout.DidNotRun], by[scaleout.Untyped], okAfter, after)
	done, lost, calls := 0, 0, 0
	for _, s := range r.sessions {
		calls += s.echoes
		for _, c := range s.calls {
			if c.outcome == scaleout.Succeeded {
				calls++
			}
		}
		switch {
		case s.err == nil:
			done++
		case s.err != nil && s.outcome != scaleout.Untyped:
			lost++
		}
	}
	fmt.Fprintf(w, "2025 sessions through HAProxy (sticky): %d, completed %d (each on one replica, or on a second after its own was killed), ended typed with the killed replica %d, calls succeeded %d\n",
		len(r.sessions), done, lost, calls)
	fmt.Fprintf(w, "stateless upstream: %d executions, %d duplicates; session upstream: %d sessions opened\n",
		r.stats.Executions, r.stats.Duplicates, r.sessionStats.SessionsCreated)
	if len(r.violations) == 0 {
		fmt.Fprintln(w, "PASS")
		return
	}
	fmt.Fprintf(w, "FAIL: %d violation(s):\n  %s\n", len(r.violations), strings.Join(r.violations, "\n  "))
}

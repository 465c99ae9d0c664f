package testservers

import (
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Fault is a kind of failure an HTTP test server can inject. Its text is
// the key of Stats.Faults.
type Fault string

const (
	// FaultDropStream cuts the SSE stream answering a POST after
	// FaultRule.AfterEvents message events. With HTTPOptions.Priming the
	// stream's events carry ids and the server keeps them: a GET with
	// Last-Event-ID resumes it, replaying what the client missed. In
	// JSON-response mode the connection is aborted instead of answered,
	// once the request ran.
	FaultDropStream Fault = "drop-stream"
	// FaultDropStreamNoIDs is FaultDropStream on a stream whose events
	// carry no ids (and that has no priming event): it cannot be resumed,
	// and the client cannot know whether its request ran.
	FaultDropStreamNoIDs Fault = "drop-stream-no-ids"
	// FaultDropGET cuts the standalone GET stream (on HTTP+SSE, the
	// session's only stream, and its session with it) after
	// FaultRule.AfterEvents message events. Fired on a GET, it applies to
	// the stream that GET opens; fired on a POST, to the stream open at
	// that moment, counting from then.
	FaultDropGET Fault = "drop-get"
	// FaultTooManyRequests answers a POST 429 Too Many Requests, with
	// FaultRule.RetryAfter, without running it.
	FaultTooManyRequests Fault = "429"
	// FaultUnavailable answers a POST 503 Service Unavailable, with
	// FaultRule.RetryAfter if set, without running it.
	FaultUnavailable Fault = "503"
	// FaultExpireSession ends the session of a POST and answers it 404,
	// without running it: the session expired just before. Its running
	// requests are cancelled and its streams cut, unless
	// FaultRule.LetRun.
	FaultExpireSession Fault = "expire-session"
	// FaultRestart ends every session at once, cutting their streams, as
	// a server restart does, and answers the POST that fired it 404.
	FaultRestart Fault = "restart"
	// FaultCrash is counted when a stdio server crashes as
	// StdioFaults.CrashAfter asks.
	FaultCrash Fault = "crash"
)

// terminal reports whether the fault answers the request itself (so
// the core never sees it).
func (f Fault) terminal() bool {
	switch f {
	case FaultTooManyRequests, FaultUnavailable, FaultExpireSession, FaultRestart:
		return true
	}
	return false
}

// FaultRule arms one kind of fault: on which occasions it fires, and how.
//
// The occasions are the POSTs that carry at least one JSON-RPC request
// (a POST of only notifications or responses is never one) and the GETs
// that open the standalone stream (or resume it; on HTTP+SSE, that open
// a session's stream). Every rule applies to POSTs; only FaultDropGET
// with no Method applies to GETs (and it applies to a POST only while the
// session's GET stream is open). initialize is an occasion only for a
// rule whose Method is "initialize", and only 429 and 503 apply to it.
// On a stateless server, expiry and restart never apply; on HTTP+SSE,
// the drop-stream faults never do. FaultCrash is no rule: see
// StdioFaults.
//
// On one occasion the rules are tried in order. Those that answer the
// request (429, 503, expiry, restart) come first: the first of them that
// fires answers it, and no other rule fires (though each counts the
// occasion, for Skip); else every drop rule that fires applies.
type FaultRule struct {
	// Fault is the kind of failure.
	Fault Fault
	// Method restricts the rule to POSTs carrying a request of this
	// method (for example "tools/call"); any POST, and any GET, when empty.
	Method string
	// Skip lets this many matching occasions pass before the rule fires:
	// {Fault: FaultExpireSession, Skip: 3} expires the session on the
	// fourth request.
	Skip int
	// Count is how many times the rule fires at most; no limit when 0.
	Count int
	// Probability, when > 0, fires the rule on a matching occasion with
	// that probability, drawn from the generator seeded by Faults.Seed;
	// on every one when 0.
	Probability float64
	// PerSession counts Skip and Count for each session apart, instead of
	// server-wide: {Fault: FaultExpireSession, Skip: 3, Count: 1,
	// PerSession: true} lets every session serve three requests.
	PerSession bool

	// AfterEvents is, for the drop faults, how many message events the
	// stream carries before it is cut: 0 cuts it at once (after the
	// priming event of a new stream).
	AfterEvents int
	// Retry, for the drop faults, when > 0, sends "retry: <ms>" just
	// before the cut, which then ends the stream cleanly: the close a
	// server makes to have its client poll. Without it the cut aborts the
	// connection, and the client reads an unexpected EOF, as when the
	// network or the server fails.
	Retry time.Duration

	// RetryAfter is, for 429 and 503, the Retry-After header's value as
	// written ("2", "0", an HTTP date, or anything a test needs); none
	// when empty.
	RetryAfter string
	// LetRun, for FaultExpireSession on Streamable HTTP, expires the
	// session for new requests only (POST, GET, DELETE get 404): the
	// requests running in it go on to their answers, on their streams,
	// and a GET with Last-Event-ID can still resume those streams for
	// expiredGrace. Then the session is gone. As an idle session
	// expiring, it costs a client a new initialize, never a call.
	// HTTP+SSE ignores it.
	LetRun bool

	// RetryAfterDate, when > 0, sends Retry-After as an HTTP date at
	// least this far ahead, computed when the answer is sent (the date
	// has whole seconds, so the wait is within [RetryAfterDate,
	// RetryAfterDate+1s)). It takes precedence over RetryAfter.
	RetryAfterDate time.Duration
}

// Faults configure the failures an HTTP front-end (HTTPOptions.Faults,
// LegacyOptions.Faults) injects. The zero value injects none. Faults can
// also be armed later (StreamableHandler.Inject) or fired on demand
// (ExpireSession, ExpireAll, Restart, DropStreams, KillStreams); either
// way Stats.Faults counts them by kind.
type Faults struct {
	// Rules are the armed faults.
	Rules []FaultRule
	// Seed seeds the generator (math/rand/v2 PCG) that draws the rules'
	// probabilities: one client sending the same requests in the same
	// order meets the same faults.
	Seed uint64
}

// RandomFaults returns the faults of a soak test: on every request each
// of these fires with probability p, drawn from a generator seeded with
// seed: the POST stream cut before its response with ids (resumable, with
// retry: 10 ms) and without, the GET stream cut, 429 with Retry-After: 0,
// 503 with Retry-After: 0 (a client sends again after a 503 without it
// only the requests safe to repeat: it may be a gateway's answer after the
// server ran the request), and session expiry (letting running requests
// finish: LetRun). The result is a plain value: change what a test
// needs, for example LetRun false for expiries that cut calls in flight.
func RandomFaults(seed uint64, p float64) Faults {
	return Faults{Seed: seed, Rules: []FaultRule{
		{Fault: FaultTooManyRequests, Probability: p, RetryAfter: "0"},
		{Fault: FaultUnavailable, Probability: p, RetryAfter: "0"},
		{Fault: FaultExpireSession, Probability: p, LetRun: true},
		{Fault: FaultDropStream, Probability: p, Retry: 10 * time.Millisecond},
		{Fault: FaultDropStreamNoIDs, Probability: p},
		{Fault: FaultDropGET, Probability: p},
	}}
}

// occasion is one chance for faults to fire.
type occasion struct {
	get         bool     // a GET opening a stream; else a POST carrying requests
	methods     []string // the POST's request methods
	session     any      // the session, for PerSession rules
	getOpen     bool     // the session's GET stream is open
	legacy      bool     // HTTP+SSE: no POST streams
	sessionless bool     // a stateless server: no session to expire or lose
}

func (o occasion) initialize() bool { return slices.Contains(o.methods, "initialize") }

// armedRule is a rule and what it has seen.
type armedRule struct {
	FaultRule
	seen, fired int
	bySession   map[any]*[2]int // PerSession: seen, fired
}

// faultPlan decides which faults fire on each occasion.
type faultPlan struct {
	mu    sync.Mutex
	rng   *rand.Rand
	rules []*armedRule
}

func newFaultPlan(f Faults) *faultPlan {
	p := &faultPlan{rng: rand.New(rand.NewPCG(f.Seed, f.Seed^0x9e3779b97f4a7c15))}
	p.add(f.Rules...)
	return p
}

func (p *faultPlan) add(rules ...FaultRule) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range rules {
		p.rules = append(p.rules, &armedRule{FaultRule: r})
	}
}

// forget drops what PerSession rules counted for a session that ended.
func (p *faultPlan) forget(session any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.rules {
		delete(r.bySession, session)
	}
}

// applies reports whether the rule's kind and Method fit the occasion.
func (r *armedRule) applies(o occasion) bool {
	if o.get {
		return r.Fault == FaultDropGET && r.Method == ""
	}
	if o.initialize() {
		return r.Method == "initialize" && (r.Fault == FaultTooManyRequests || r.Fault == FaultUnavailable)
	}
	if r.Method != "" && !slices.Contains(o.methods, r.Method) {
		return false
	}
	switch r.Fault {
	case FaultDropGET:
		return o.getOpen
	case FaultDropStream, FaultDropStreamNoIDs:
		return !o.legacy
	case FaultExpireSession, FaultRestart:
		return !o.sessionless
	}
	return r.Fault.terminal()
}

// counts returns the rule's counts of occasions seen and firings, for
// the session of o when PerSession.
func (r *armedRule) counts(o occasion) (seen, fired *int) {
	if !r.PerSession {
		return &r.seen, &r.fired
	}
	if r.bySession == nil {
		r.bySession = make(map[any]*[2]int)
	}
	c := r.bySession[o.session]
	if c == nil {
		c = new([2]int)
		r.bySession[o.session] = c
	}
	return &c[0], &c[1]
}

// try counts the occasion for the rule and reports whether it fires;
// with mute, it counts it only.
func (p *faultPlan) try(r *armedRule, o occasion, mute bool) bool {
	seen, fired := r.counts(o)
	*seen++
	if mute || *seen <= r.Skip || (r.Count > 0 && *fired >= r.Count) {
		return false
	}
	if r.Probability > 0 && p.rng.Float64() >= r.Probability {
		return false
	}
	*fired++
	return true
}

// draw returns the rules that fire on o: one terminal rule, or the drop
// rules that fire. Every rule that applies counts the occasion, even when
// an earlier one answered the request.
func (p *faultPlan) draw(o occasion) []FaultRule {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []FaultRule
	answered := false
	for _, r := range p.rules {
		if r.Fault.terminal() && r.applies(o) && p.try(r, o, answered) {
			out, answered = append(out, r.FaultRule), true
		}
	}
	for _, r := range p.rules {
		if !r.Fault.terminal() && r.applies(o) && p.try(r, o, answered) {
			out = append(out, r.FaultRule)
		}
	}
	return out
}

// first returns the first of rules of kind f.
func first(rules []FaultRule, f Fault) (FaultRule, bool) {
	for _, r := range rules {
		if r.Fault == f {
			return r, true
		}
	}
	return FaultRule{}, false
}

// reject answers a request with the status of a 429 or 503 rule and its
// Retry-After header.
func (r FaultRule) reject(w http.ResponseWriter) {
	status := http.StatusServiceUnavailable
	if r.Fault == FaultTooManyRequests {
		status = http.StatusTooManyRequests
	}
	switch {
	case r.RetryAfterDate > 0:
		t := time.Now().Add(r.RetryAfterDate)
		if t.Nanosecond() != 0 {
			t = t.Truncate(time.Second).Add(time.Second)
		}
		w.Header().Set("Retry-After", t.UTC().Format(http.TimeFormat))
	case r.RetryAfter != "":
		w.Header().Set("Retry-After", r.RetryAfter)
	}
	httpError(w, status, CodeRejected, "rejected by an injected fault ("+strconv.Itoa(status)+"); the request was not processed")
}

// CodeRejected is the JSON-RPC error code in the body of a 429 or 503
// answered by a fault.
const CodeRejected = -32000

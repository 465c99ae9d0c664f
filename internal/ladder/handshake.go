package ladder

import (
	"context"
	"errors"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
)

// Handshake finds the era of the server at the other end of t, a transport
// without HTTP statuses (stdio, or a host's own), by the stdio binding's
// backward-compatibility rule: the stateless probe (server/discover) first,
// waited for at most cfg.ProbeTimeout; a result or a recognised stateless
// error means stateless, anything else (silence included) means initialize.
// A late stateless answer still decides. A server that refused the probe and
// then refuses initialize (the probe may have started its session) is
// started again with cfg.Restart, when set, and sent initialize alone.
// cfg.CacheKey, when set, caches the era so the next start skips the probe.
// docs/negotiation.md has the whole rule.
//
// On success the caller owns the returned Result's Transport (t, wrapped so
// that messages received during the handshake come first). On failure t
// is left open: the caller closes it.
func Handshake(ctx context.Context, t jsonrpc.Transport, name string, hello Hello, cfg Config) (*Result, error) {
	l, err := newLadder(cfg.CacheKey, hello, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Label != "" {
		l.report.URL = cfg.Label
	}
	h := &handshake{ladder: l, t: t, name: name, p: newPump(t, l.cfg.Logger), restartServer: cfg.Restart}
	return h.run(ctx)
}

type handshake struct {
	*ladder
	t    jsonrpc.Transport
	name string
	p    *pump
	late *lateProbe // the probe whose answer did not come in time, if any
	// restartServer stops the server and starts it again (see restart):
	// cfg.Restart for Handshake, Dial's own for a command; nil for none.
	restartServer func(ctx context.Context) (jsonrpc.Transport, error)
}

// lateProbe is a probe given up on: a server slow to start (npx or uvx
// fetching it) answers it after initialize went out, and that answer still
// tells its era. The pump keeps it aside (giveUp).
type lateProbe struct {
	version string
	start   time.Time
}

func (h *handshake) run(ctx context.Context) (*Result, error) {
	probeFirst := h.hello.Discover != nil
	if _, era, ok := h.cfg.Cache.Lookup(h.url); ok && h.url != "" && h.hello.Initialize != nil && era == mcp.EraInitialize {
		h.report.FromCache = true
		probeFirst = false
	}
	if probeFirst {
		res, out := h.probe(ctx)
		switch out {
		case succeeded:
			return h.done(res), nil
		case stopped:
			return nil, h.failure()
		}
	}
	if h.hello.Initialize == nil {
		return nil, h.failure()
	}
	res, out := h.initialize(ctx)
	if probeFirst && h.late == nil && out == succeeded && res.Response.Error != nil && h.restartServer != nil {
		res, out = h.restart(ctx, "refused after the probe, which may have started the session: starting the server again for initialize alone")
	}
	if h.late != nil && (out == succeeded || out == statelessFirst) {
		// The server took longer to answer than the probe waited. Its
		// answer to the probe decides the era: when it took initialize,
		// the answer may still follow (a server that handles requests
		// concurrently may answer initialize first), so it gets one more
		// probe timeout to come; when it refused initialize, it is asked
		// again, now that it is up.
		refused := out == statelessFirst || res.Response.Error != nil
		var wait time.Duration
		if !refused {
			wait = h.probeTimeout()
		}
		if mres, decided := h.lateAnswer(ctx, wait); decided {
			if mres == nil {
				return nil, h.failure()
			}
			return h.done(mres), nil
		}
		if refused {
			h.late = nil
			mres, pout := h.probe(ctx)
			switch {
			case pout == succeeded:
				return h.done(mres), nil
			case pout == movedOn && out == succeeded && res.Response.Error != nil && h.restartServer != nil:
				// An initialize-era server that refuses initialize after the
				// probe: the probe may have started its session.
				if res, out = h.restart(ctx, "not a stateless server either, and it refused initialize after the probe, which may have started its session: starting the server again for initialize alone"); out == succeeded {
					return h.done(res), nil
				}
			case pout == movedOn && out == succeeded:
				return h.done(res), nil // an initialize-era server: initialize's answer stands
			}
			return nil, h.failure()
		}
	}
	switch {
	case out == succeeded:
		return h.done(res), nil
	case out == statelessFirst && !probeFirst && h.hello.Discover != nil:
		// A cached initialize era that no longer holds: probe after all.
		h.cfg.Cache.Forget(h.url)
		if res, out := h.probe(ctx); out == succeeded {
			return h.done(res), nil
		}
	}
	return nil, h.failure()
}

// done finishes a successful handshake.
func (h *handshake) done(res *Result) *Result {
	res.DroppedNotifications = h.p.dropped()
	res.Transport, res.Name = h.p.handOff(), h.name
	h.report.Chosen, h.report.Era = h.name, res.Era
	if h.url != "" && h.cfg.Era == negotiate.EraAuto {
		h.cfg.Cache.Store(h.url, h.name, res.Era)
	}
	res.Report, res.NextID = h.report, h.nextID
	return res
}

// probeTimeout is how long a probe's answer is waited for.
func (h *handshake) probeTimeout() time.Duration {
	if h.cfg.ProbeTimeout > 0 {
		return h.cfg.ProbeTimeout
	}
	return negotiate.DefaultProbeTimeout
}

// probe sends server/discover, retrying another revision when asked.
func (h *handshake) probe(ctx context.Context) (*Result, outcome) {
	version := mcp.LatestStatelessVersion
	if h.cfg.Version != "" {
		version = h.cfg.Version
	}
	timeout := h.probeTimeout()
	tries := map[string]int{}
	for range maxVersionTries {
		tries[version]++
		start := time.Now()
		a := negotiate.Attempt{Era: mcp.EraStateless, Transport: h.name, Request: negotiate.RequestDiscover, URL: h.report.URL, Version: version}
		pctx, cancel := context.WithTimeout(ctx, timeout)
		resp, err := h.exchange(pctx, h.name, h.t, h.p, h.request(h.hello.Discover(version)))
		timedOut := err != nil && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		a.Duration = time.Since(start)
		if err != nil && ctx.Err() != nil {
			a.Decision = "out of time: stopping"
			h.record(a, err, "")
			return nil, stopped
		}
		v := judgeProbe(resp, err, false, timedOut, version)
		a.Decision, a.Answer = v.why, answerOf(resp, err)
		switch v.kind {
		case isStateless, isStatelessBare:
			h.record(a, nil, "")
			return &Result{Era: mcp.EraStateless, Version: version, Response: resp}, succeeded
		case retryVersion:
			if tries[v.version] >= 2 || (v.version != version && tries[v.version] >= 1) {
				a.Decision = v.why + ", but it keeps refusing revisions it lists: stopping"
				h.record(a, errOf(resp, err), "")
				return nil, stopped
			}
			h.record(a, errOf(resp, err), "")
			version = v.version
		case isInitialize:
			if timedOut {
				err = errors.New("no answer within " + timeout.String())
				h.p.giveUp()
				h.late = &lateProbe{version: version, start: start}
			}
			if h.hello.Initialize == nil {
				a.Decision = "not a stateless server, and the era policy allows only stateless revisions: stopping"
				h.record(a, errOf(resp, err), "not a stateless server, and the era policy allows only stateless revisions")
				return nil, stopped
			}
			a.Decision += ": trying initialize"
			h.record(a, errOf(resp, err), "")
			return nil, movedOn
		default:
			if supported, ok := supportedList(rpcErrorOf(resp, err)); ok {
				h.errs = append(h.errs, &negotiate.NewerServerError{URL: h.report.URL, RPCError: rpcErrorOf(resp, err), Supported: supported})
			}
			h.record(a, errOf(resp, err), "")
			return nil, stopped
		}
	}
	return nil, stopped
}

// lateAnswer takes the answer to the probe that timed out, which the pump
// kept aside, waiting for it at most wait. A DiscoverResult makes the
// server stateless after all; a recognised stateless error too, and the probe is
// sent again (now that the server is up) for the revision to use. decided
// is false when no answer came, or when it is not a stateless one: then
// initialize's answer stands. When decided, res is the stateless outcome, or
// nil if probing again failed.
func (h *handshake) lateAnswer(ctx context.Context, wait time.Duration) (res *Result, decided bool) {
	late := h.late
	m := h.p.lateAnswer(ctx, wait)
	if m == nil {
		return nil, false
	}
	v := judgeProbe(m, nil, false, false, late.version)
	if v.kind == isInitialize {
		return nil, false
	}
	h.late = nil
	a := negotiate.Attempt{Era: mcp.EraStateless, Transport: h.name, Request: negotiate.RequestDiscover, URL: h.report.URL,
		Version: late.version, Duration: time.Since(late.start), Answer: answerOf(m, nil)}
	if v.kind == isStateless || v.kind == isStatelessBare {
		a.Decision = "the answer to the probe came late, after initialize: " + v.why + " after all"
		h.record(a, nil, "")
		return &Result{Era: mcp.EraStateless, Version: late.version, Response: m}, true
	}
	a.Decision = "the answer to the probe came late, after initialize: " + v.why + ": probing again"
	h.record(a, errOf(m, nil), "")
	if res, out := h.probe(ctx); out == succeeded {
		return res, true
	}
	return nil, true
}

// restart answers a server that refused the stateless probe, then refused
// initialize with a JSON-RPC error: the probe may have started its
// session (a stdio face over another server does so on any first
// message, and then refuses initialize as a second one). The server is
// stopped and started again (restartServer), and initialize alone is sent
// to the new process; its answer stands, whatever it is, and so the era
// cached for the server is the initialize-era one, which skips the probe next
// time.
// why replaces the decision of the last attempt, which led here.
func (h *handshake) restart(ctx context.Context, why string) (*Result, outcome) {
	h.report.Attempts[len(h.report.Attempts)-1].Decision = why
	start := time.Now()
	old := h.p
	t, err := h.restartServer(ctx)
	old.abandon() // Restart closed it: this only waits for its reader
	if err != nil {
		h.record(negotiate.Attempt{Era: mcp.EraInitialize, Transport: h.name, Request: negotiate.RequestInitialize, URL: h.report.URL,
			Duration: time.Since(start), Decision: "the server could not be started again: stopping"}, err, "starting the server again")
		return nil, stopped
	}
	h.t, h.p = t, newPump(t, h.cfg.Logger)
	res, out := h.initialize(ctx)
	a := &h.report.Attempts[len(h.report.Attempts)-1]
	a.Decision = "the server started again, without the probe: " + a.Decision
	return res, out
}

// initialize sends initialize and waits for its answer (bounded by ctx).
func (h *handshake) initialize(ctx context.Context) (*Result, outcome) {
	start := time.Now()
	a := negotiate.Attempt{Era: mcp.EraInitialize, Transport: h.name, Request: negotiate.RequestInitialize, URL: h.report.URL}
	resp, note, err := h.sendInitialize(ctx, h.name, h.t, h.p)
	a.Duration, a.Answer = time.Since(start), answerOf(resp, err)
	switch {
	case err != nil:
		a.Decision = "initialize failed: stopping"
		h.record(a, err, "")
		return nil, stopped
	case statelessRefusal(resp.Error):
		supported, _ := supportedList(resp.Error)
		h.errs = append(h.errs, &negotiate.NewerServerError{URL: h.report.URL, RPCError: resp.Error, Supported: supported})
		a.Decision = "refused as a stateless server refuses initialize"
		h.record(a, resp.Error, "")
		return nil, statelessFirst
	}
	a.Decision = note + "initialize answered"
	h.record(a, nil, "")
	return &Result{Era: mcp.EraInitialize, Response: resp}, succeeded
}

// answerOf says how a request over a transport without statuses went.
func answerOf(resp *jsonrpc.Message, err error) string {
	switch {
	case err != nil:
		return "no answer"
	case resp.Error != nil:
		return "refused"
	}
	return "answered"
}

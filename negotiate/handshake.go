package negotiate

import (
	"context"
	"errors"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
)

// Handshake finds the era of the server at the other end of t, a transport
// without HTTP statuses (stdio, or a host's own), as the stdio binding's
// backward-compatibility rule says: it sends the modern probe
// (server/discover) and waits for it at most cfg.ProbeTimeout; a
// DiscoverResult or a recognised modern error means a modern server (a
// -32022 listing another modern revision we speak is tried again with
// it); any other error, or silence, means a legacy one, and initialize
// follows. name is the transport's name for the report; cfg.CacheKey, when
// set, caches the era so that the next start of the same server skips the
// probe (and, should the cached era stop working, runs it after all).
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
	h := &handshake{ladder: l, t: t, name: name, p: newPump(t, l.cfg.Logger)}
	return h.run(ctx)
}

type handshake struct {
	*ladder
	t    jsonrpc.Transport
	name string
	p    *pump
}

func (h *handshake) run(ctx context.Context) (*Result, error) {
	probeFirst := h.hello.Discover != nil
	if e, ok := h.cfg.Cache.lookup(h.url); ok && h.url != "" && h.hello.Initialize != nil && e.Era == mcp.EraLegacy {
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
	switch {
	case out == succeeded:
		return h.done(res), nil
	case out == modernFirst && !probeFirst && h.hello.Discover != nil:
		// A cached legacy era that no longer holds: probe after all.
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
	h.report.Chosen, h.report.Era = h.name, string(res.Era)
	if h.url != "" && h.cfg.Era == EraAuto {
		h.cfg.Cache.store(h.url, entry{Transport: h.name, Era: res.Era})
	}
	res.Report, res.NextID = h.report, h.nextID
	return res
}

// probe sends server/discover, retrying another revision when asked.
func (h *handshake) probe(ctx context.Context) (*Result, outcome) {
	version := mcp.LatestModernVersion
	if h.cfg.Version != "" {
		version = h.cfg.Version
	}
	timeout := h.cfg.ProbeTimeout
	if timeout <= 0 {
		timeout = DefaultProbeTimeout
	}
	tries := map[string]int{}
	for range maxVersionTries {
		tries[version]++
		start := time.Now()
		a := Attempt{Era: string(mcp.EraModern), Transport: h.name, Request: RequestDiscover, URL: h.report.URL, Version: version}
		pctx, cancel := context.WithTimeout(ctx, timeout)
		resp, err := h.exchange(pctx, h.t, h.p, h.request(h.hello.Discover(version)))
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
		case isModern, isModernBare:
			h.record(a, nil, "")
			return &Result{Era: mcp.EraModern, Version: version, Response: resp}, succeeded
		case retryVersion:
			if tries[v.version] >= 2 || (v.version != version && tries[v.version] >= 1) {
				a.Decision = v.why + ", but it keeps refusing revisions it lists: stopping"
				h.record(a, errOf(resp, err), "")
				return nil, stopped
			}
			h.record(a, errOf(resp, err), "")
			version = v.version
		case isLegacy:
			if timedOut {
				err = errors.New("no answer within " + timeout.String())
			}
			if h.hello.Initialize == nil {
				a.Decision = "not a modern server, and the era policy allows only modern revisions: stopping"
				h.record(a, errOf(resp, err), "not a modern server, and the era policy allows only modern revisions")
				return nil, stopped
			}
			a.Decision += ": trying initialize"
			h.record(a, errOf(resp, err), "")
			return nil, movedOn
		default:
			if supported, ok := supportedList(rpcErrorOf(resp, err)); ok {
				h.errs = append(h.errs, &NewerServerError{URL: h.url, RPCError: rpcErrorOf(resp, err), Supported: supported})
			}
			h.record(a, errOf(resp, err), "")
			return nil, stopped
		}
	}
	return nil, stopped
}

// initialize sends initialize and waits for its answer (bounded by ctx).
func (h *handshake) initialize(ctx context.Context) (*Result, outcome) {
	start := time.Now()
	a := Attempt{Era: string(mcp.EraLegacy), Transport: h.name, Request: RequestInitialize, URL: h.report.URL}
	resp, err := h.exchange(ctx, h.t, h.p, h.request(h.hello.Initialize))
	a.Duration, a.Answer = time.Since(start), answerOf(resp, err)
	switch {
	case err != nil:
		a.Decision = "initialize failed: stopping"
		h.record(a, err, "")
		return nil, stopped
	case modernRefusal(resp.Error):
		supported, _ := supportedList(resp.Error)
		h.errs = append(h.errs, &NewerServerError{URL: h.url, RPCError: resp.Error, Supported: supported})
		a.Decision = "refused as a modern server refuses initialize"
		h.record(a, resp.Error, "")
		return nil, modernFirst
	}
	a.Decision = "initialize answered"
	h.record(a, nil, "")
	return &Result{Era: mcp.EraLegacy, Response: resp}, succeeded
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

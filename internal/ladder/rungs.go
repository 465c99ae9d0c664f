package ladder

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/anymcp/anymcp/httpopt"
	"github.com/anymcp/anymcp/internal/origin"
	"github.com/anymcp/anymcp/internal/reqmeta"
	"github.com/anymcp/anymcp/internal/retry"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/legacy"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/modern"
	"github.com/anymcp/anymcp/negotiate"
)

// maxVersionTries bounds the stateless probe's retries with another revision.
const maxVersionTries = 3

// tryStateless POSTs server/discover to the URL, carrying the revision in
// _meta and in the request metadata headers, and reads the answer as the
// backward-compatibility rules say (judgeProbe).
func (l *ladder) tryStateless(ctx context.Context) (*Result, outcome) {
	version := mcp.LatestStatelessVersion
	if l.cfg.Version != "" {
		version = l.cfg.Version
	}
	tries := map[string]int{}
	for range maxVersionTries {
		tries[version]++
		start := time.Now()
		hc, rec := recordingClient(l.cfg.HTTPClient)
		a := negotiate.Attempt{Era: mcp.EraStateless, Transport: negotiate.StreamableHTTP, Request: negotiate.RequestDiscover, Method: http.MethodPost, URL: l.shown, Version: version}
		t, err := modern.New(l.url, l.modernOptions(hc))
		if err != nil {
			rec.active.Store(false)
			a.Decision = "not a usable URL: stopping"
			l.record(a, err, "")
			return nil, stopped
		}
		msg := l.request(l.hello.Discover(version))
		p := newPump(t, l.cfg.Logger)
		sctx := reqmeta.With(retry.FirstContact(ctx), reqmeta.Headers(version, msg.Method, ""))
		resp, err := l.exchange(sctx, negotiate.StreamableHTTP, t, p, msg)
		rec.active.Store(false)
		a.Duration, a.Status = time.Since(start), rec.firstStatus()
		if err != nil && ctx.Err() != nil {
			p.abandon()
			a.Decision = "out of time: stopping"
			l.record(a, err, "")
			return nil, stopped
		}
		v := judgeProbe(resp, err, true, false, version)
		a.Decision = v.why
		switch v.kind {
		case isStateless, isStatelessBare:
			if err != nil { // a 404 with -32601: keep it as the answer
				var he *jsonrpc.HTTPError
				errors.As(err, &he)
				resp = &jsonrpc.Message{ID: msg.ID, Error: he.RPCError}
			}
			l.record(a, nil, "")
			return &Result{Transport: p.handOff(), Name: negotiate.StreamableHTTP, Era: mcp.EraStateless, Version: version, Response: resp,
				DroppedNotifications: p.dropped()}, succeeded
		case retryVersion:
			p.abandon()
			if tries[v.version] >= 2 || (v.version != version && tries[v.version] >= 1) {
				a.Decision = v.why + ", but it keeps refusing revisions it lists: stopping"
				l.record(a, errOf(resp, err), "")
				return nil, stopped
			}
			l.record(a, errOf(resp, err), "")
			version = v.version
			continue
		case isInitialize:
			p.abandon()
			if errors.Is(err, modern.ErrEndpointEvent) && l.hello.Initialize != nil && l.allows(rungSSE) {
				// No Streamable HTTP here: the POST of initialize
				// would get the same stream.
				l.tried[rungStreamable] = true
				l.queue = append([]rung{rungSSE}, l.queue...)
				a.Decision = v.why + ": trying HTTP+SSE"
				l.record(a, err, "")
				return nil, movedOn
			}
			if l.hello.Initialize == nil {
				a.Decision = strings.TrimSuffix(v.why, ": trying initialize") + ": the era policy allows only stateless revisions: stopping"
				l.record(a, errOf(resp, err), "not a stateless server, and the era policy allows only stateless revisions")
				return nil, stopped
			}
			l.record(a, errOf(resp, err), "")
			return nil, movedOn
		default:
			p.abandon()
			if supported, ok := supportedList(rpcErrorOf(resp, err)); ok && v.kind == giveUp {
				l.errs = append(l.errs, &negotiate.NewerServerError{URL: l.shown, Status: a.Status, RPCError: rpcErrorOf(resp, err), Supported: supported})
			}
			if a.Status == 0 && droppedConnection(err) {
				err = fmt.Errorf("%w; %w", err, negotiate.ErrProbeDropped)
			}
			l.record(a, errOf(resp, err), "")
			return nil, stopped
		}
	}
	return nil, stopped
}

// errOf is the error an answer amounts to, for the report: Send's, or the
// JSON-RPC error the answer carries.
func errOf(resp *jsonrpc.Message, err error) error {
	if err != nil {
		return err
	}
	if resp != nil && resp.Error != nil {
		return resp.Error
	}
	return nil
}

// common is the transports' share of the configuration, with hc (the
// recording client of one rung) as the HTTP client.
func (l *ladder) common(hc *http.Client) httpopt.Common {
	c := l.cfg.Common
	c.HTTPClient = hc
	return c
}

func rpcErrorOf(resp *jsonrpc.Message, err error) *jsonrpc.Error {
	var he *jsonrpc.HTTPError
	switch {
	case errors.As(err, &he):
		return he.RPCError
	case err == nil && resp != nil:
		return resp.Error
	}
	return nil
}

func (l *ladder) modernOptions(hc *http.Client) modern.Options {
	return modern.Options{Common: l.common(hc), StreamOnDemand: l.cfg.StreamOnDemand}
}

// tryStreamable POSTs initialize to the URL.
func (l *ladder) tryStreamable(ctx context.Context) (*Result, outcome) {
	start := time.Now()
	hc, rec := recordingClient(l.cfg.HTTPClient)
	defer rec.active.Store(false)
	a := negotiate.Attempt{Era: mcp.EraInitialize, Transport: negotiate.StreamableHTTP, Request: negotiate.RequestInitialize, Method: http.MethodPost, URL: l.shown}
	t, err := modern.New(l.url, l.modernOptions(hc))
	if err != nil {
		a.Decision = "not a usable URL: stopping"
		l.record(a, err, "")
		return nil, stopped
	}
	res, note, err := l.initialize(ctx, t, negotiate.StreamableHTTP)
	a.Duration, a.Status = time.Since(start), rec.firstStatus()
	if err == nil {
		a.Decision = note + "initialize answered: using Streamable HTTP"
		l.record(a, nil, "")
		return res, succeeded
	}

	var newer *negotiate.NewerServerError
	var he *jsonrpc.HTTPError
	var redirect *jsonrpc.RedirectError
	switch {
	case errors.As(err, &newer):
		a.Decision = "the server refused initialize as a stateless server does"
		l.record(a, err, "")
		return nil, l.statelessInstead(a)
	case errors.Is(err, modern.ErrEndpointEvent):
		if l.cfg.Policy == negotiate.StreamableOnly {
			a.Decision = endpointEventWhy + ": the policy allows Streamable HTTP only: stopping"
			l.record(a, err, "")
			return nil, stopped
		}
		a.Decision = endpointEventWhy + ": trying HTTP+SSE at the same URL"
		l.record(a, err, "")
		return nil, movedOn
	case errors.As(err, &he) && isFallbackStatus(he.StatusCode):
		if statelessRefusal(he.RPCError) {
			supported, _ := supportedList(he.RPCError)
			l.errs = append(l.errs, &negotiate.NewerServerError{URL: l.shown, Status: he.StatusCode, RPCError: he.RPCError, Supported: supported})
			a.Decision = fmt.Sprintf("%d with a JSON-RPC error (%v) means a stateless server, not an older one: not falling back to HTTP+SSE", he.StatusCode, he.RPCError)
			l.record(a, err, "")
			return nil, l.statelessInstead(a)
		}
		if l.cfg.Policy == negotiate.StreamableOnly {
			a.Decision = fmt.Sprintf("%d: the policy allows Streamable HTTP only: stopping", he.StatusCode)
		} else {
			a.Decision = fmt.Sprintf("%d is a fallback status: trying HTTP+SSE at the same URL", he.StatusCode)
		}
		l.record(a, err, "")
		return nil, movedOn
	case errors.As(err, &redirect):
		a.Decision = fmt.Sprintf("its %d redirect was refused: not a reason to fall back: stopping", redirect.Status)
	case he != nil:
		a.Decision = fmt.Sprintf("%d is not a reason to fall back: stopping", he.StatusCode)
	case ctx.Err() != nil:
		a.Decision = "out of time: not a reason to fall back: stopping"
	default:
		a.Decision = "not a reason to fall back: stopping"
	}
	l.record(a, err, "")
	return nil, stopped
}

// statelessInstead is what follows an initialize-era refusal that came from a stateless
// server: the stateless request, unless it was tried already or is not
// allowed (then the NewerServerError recorded stands).
func (l *ladder) statelessInstead(a negotiate.Attempt) outcome {
	last := &l.report.Attempts[len(l.report.Attempts)-1]
	if l.tried[rungStateless] || !l.allows(rungStateless) {
		last.Decision += ": stopping"
		return stopped
	}
	last.Decision += ": trying the stateless request"
	return statelessFirst
}

// trySSE GETs the URL as an HTTP+SSE stream and runs initialize over it.
// cached says this is the cache's outcome, tried first: a stream that
// gives no endpoint event within cachedEndpointWait then says the cache is
// stale, and the ladder goes on.
func (l *ladder) trySSE(ctx context.Context, cached bool) (*Result, outcome) {
	start := time.Now()
	hc, rec := recordingClient(l.cfg.HTTPClient)
	defer rec.active.Store(false)
	a := negotiate.Attempt{Era: mcp.EraInitialize, Transport: negotiate.SSE, Request: negotiate.RequestInitialize, Method: http.MethodGet, URL: l.shown}
	dctx := ctx
	if cached {
		wait := cachedEndpointWait
		if d, ok := ctx.Deadline(); ok && time.Until(d)/2 < wait {
			wait = time.Until(d) / 2
		}
		var cancel context.CancelFunc
		dctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	t, err := legacy.Dial(dctx, l.url, legacy.Options{Common: l.common(hc)})
	if err != nil {
		a.Duration, a.Status = time.Since(start), rec.firstStatus()
		var notSSE *legacy.NotSSEError
		var he *jsonrpc.HTTPError
		refused, detail := false, ""
		switch {
		case cached && dctx.Err() != nil && ctx.Err() == nil:
			refused, detail = true, "no endpoint event in "+time.Since(start).Round(time.Millisecond).String()
		case errors.As(err, &notSSE):
			refused, detail = true, "not an SSE stream"
		case errors.Is(err, legacy.ErrNoEndpoint):
			refused, detail = true, "no endpoint event"
		case errors.As(err, &he) && isFallbackStatus(he.StatusCode):
			refused, detail = true, "not an SSE stream"
		}
		var redirect *jsonrpc.RedirectError
		switch {
		case refused && cached:
			a.Decision = "no HTTP+SSE server here: the cached outcome is stale"
		case refused:
			a.Decision = "no HTTP+SSE server here"
		case errors.As(err, &redirect):
			a.Decision = fmt.Sprintf("its %d redirect was refused: stopping", redirect.Status)
		case ctx.Err() != nil:
			a.Decision = "out of time: stopping"
		default:
			a.Decision = "stopping"
		}
		l.record(a, err, detail)
		if refused {
			return nil, movedOn
		}
		return nil, stopped
	}
	endpoint := shownURL(t.Endpoint())
	res, note, err := l.initialize(ctx, t, negotiate.SSE)
	a.Duration, a.Status = time.Since(start), rec.firstStatus()
	if err == nil {
		a.Decision = "endpoint " + endpoint + "; " + note + "initialize answered: using HTTP+SSE"
		l.record(a, nil, "")
		return res, succeeded
	}
	a.Decision = "endpoint " + endpoint + ", but initialize failed: stopping"
	l.record(a, err, "initialize failed")
	return nil, stopped
}

// initialize sends the initialize request over t and waits for its answer;
// on failure t is closed. A refusal in a 2xx body that only a stateless server
// gives is a *NewerServerError.
func (l *ladder) initialize(ctx context.Context, t jsonrpc.Transport, name string) (*Result, string, error) {
	p := newPump(t, l.cfg.Logger)
	resp, note, err := l.sendInitialize(retry.FirstContact(ctx), name, t, p)
	if err == nil && statelessRefusal(resp.Error) {
		supported, _ := supportedList(resp.Error)
		err = &negotiate.NewerServerError{URL: l.shown, RPCError: resp.Error, Supported: supported}
	}
	if err != nil {
		p.abandon()
		return nil, note, err
	}
	return &Result{Transport: p.handOff(), Name: name, Era: mcp.EraInitialize, Response: resp, DroppedNotifications: p.dropped()}, note, nil
}

// shownURL is raw for reports, errors and logs, which are meant to be
// shown: without a password, and without the values of its query, where
// some servers take an api key and HTTP+SSE servers put the session id
// (origin.RedactString).
func shownURL(raw string) string { return origin.RedactString(raw) }

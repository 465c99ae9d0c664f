package negotiate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/legacy"
	"github.com/anymcp/anymcp/modern"
)

// tryStreamable POSTs initialize to the URL.
func (l *ladder) tryStreamable(ctx context.Context) (*Result, outcome) {
	start := time.Now()
	hc, rec := recordingClient(l.cfg.HTTPClient)
	defer rec.active.Store(false)
	a := Attempt{Transport: StreamableHTTP, Method: http.MethodPost, URL: l.url}
	t, err := modern.New(l.url, modern.Options{HTTPClient: hc, Header: l.cfg.Header, Logger: l.cfg.Logger, MaxEventSize: l.cfg.MaxEventSize, Reconnect: l.cfg.Reconnect})
	if err != nil {
		a.Decision = "not a usable URL: stopping"
		l.record(a, err, "")
		return nil, stopped
	}
	res, err := l.initialize(ctx, t, StreamableHTTP)
	a.Duration, a.Status = time.Since(start), rec.firstStatus()
	if err == nil {
		a.Decision = "initialize answered: using Streamable HTTP"
		l.record(a, nil, "")
		return res, succeeded
	}

	var newer *NewerServerError
	var he *jsonrpc.HTTPError
	switch {
	case errors.As(err, &newer):
		a.Decision = "the server answered initialize as a newer revision does: not falling back"
	case errors.As(err, &he) && isFallbackStatus(he.StatusCode):
		if supported, ok := newerServer(he.RPCError); ok {
			newer = &NewerServerError{URL: l.url, Status: he.StatusCode, RPCError: he.RPCError, Supported: supported}
			a.Decision = fmt.Sprintf("%d with a JSON-RPC error (%v) means a newer server, not an older one: not falling back", he.StatusCode, he.RPCError)
			l.record(a, newer, "")
			return nil, stopped
		}
		if l.cfg.Policy == StreamableOnly {
			a.Decision = fmt.Sprintf("%d: the policy allows Streamable HTTP only: stopping", he.StatusCode)
		} else {
			a.Decision = fmt.Sprintf("%d is a fallback status: trying HTTP+SSE at the same URL", he.StatusCode)
		}
		l.record(a, err, "")
		return nil, movedOn
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

// trySSE GETs the URL as an HTTP+SSE stream and runs initialize over it.
func (l *ladder) trySSE(ctx context.Context) (*Result, outcome) {
	start := time.Now()
	hc, rec := recordingClient(l.cfg.HTTPClient)
	defer rec.active.Store(false)
	a := Attempt{Transport: SSE, Method: http.MethodGet, URL: l.url}
	t, err := legacy.Dial(ctx, l.url, legacy.Options{HTTPClient: hc, Header: l.cfg.Header, Logger: l.cfg.Logger, MaxEventSize: l.cfg.MaxEventSize, Reconnect: l.cfg.Reconnect})
	if err != nil {
		a.Duration, a.Status = time.Since(start), rec.firstStatus()
		var notSSE *legacy.NotSSEError
		var he *jsonrpc.HTTPError
		refused, detail := false, ""
		switch {
		case errors.As(err, &notSSE):
			refused, detail = true, "not an SSE stream"
		case errors.Is(err, legacy.ErrNoEndpoint):
			refused, detail = true, "no endpoint event"
		case errors.As(err, &he) && isFallbackStatus(he.StatusCode):
			refused, detail = true, "not an SSE stream"
		}
		switch {
		case refused:
			a.Decision = "no HTTP+SSE server here"
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
	endpoint := redactQuery(t.Endpoint())
	res, err := l.initialize(ctx, t, SSE)
	a.Duration, a.Status = time.Since(start), rec.firstStatus()
	if err == nil {
		a.Decision = "endpoint " + endpoint + "; initialize answered: using HTTP+SSE"
		l.record(a, nil, "")
		return res, succeeded
	}
	a.Decision = "endpoint " + endpoint + ", but initialize failed: stopping"
	l.record(a, err, "initialize failed")
	return nil, stopped
}

// initialize sends the initialize request over t and waits for its answer;
// on failure t is closed.
func (l *ladder) initialize(ctx context.Context, t jsonrpc.Transport, name string) (*Result, error) {
	resp, before, err := l.exchange(ctx, t)
	if err == nil {
		var res *Result
		if res, err = l.accept(t, name, resp, before); err == nil {
			return res, nil
		}
	}
	t.Close()
	return nil, err
}

// redactQuery hides the values of a URL's query, where HTTP+SSE servers put
// the session id: the report is meant to be shown and logged.
func redactQuery(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.RawQuery == "" {
		return raw
	}
	u.User = nil
	parts := strings.Split(u.RawQuery, "&")
	for i, p := range parts {
		if k, _, ok := strings.Cut(p, "="); ok {
			parts[i] = k + "=…"
		}
	}
	u.RawQuery = strings.Join(parts, "&")
	return u.String()
}

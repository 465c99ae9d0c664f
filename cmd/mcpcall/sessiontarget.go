package main

import (
	"context"
	"fmt"

	"github.com/anymcp/anymcp/negotiate"
)

// sessionTarget is the target of --session NAME and @NAME: the gateway
// on the session's socket. A session whose gateway died is cleaned up
// here, and the run fails saying so.
func (c *cli) sessionTarget(ctx context.Context, name string) (*target, error) {
	if err := checkSessionName(name); err != nil {
		return nil, err
	}
	if len(c.f.headers) > 0 || c.f.bearerEnv != "" || len(c.f.env) > 0 || c.f.cwd != "" || c.f.inherit || c.f.transport != "" {
		return nil, usageErr("-H, --bearer-env, -e, --cwd, --inherit-env and --transport belong to `mcpcall session start`: session %s is connected already", name)
	}
	dir, err := c.sessionDir()
	if err != nil {
		return nil, err
	}
	f := sessionFiles{dir, name}
	rec, live, err := probe(ctx, f)
	if err != nil {
		return nil, err
	}
	if live == nil {
		if rec == nil {
			return nil, &connectError{fmt.Errorf("no session %s: start it with `mcpcall session start %s TARGET` (mcpcall session list shows the running ones)", name, name)}
		}
		if unlock, ok := tryLock(f); ok {
			if rec, live, _ = probe(ctx, f); live == nil {
				cleanStale(f, rec)
			}
			unlock()
		}
		if live == nil {
			return nil, &connectError{fmt.Errorf("session %s is not running: its gateway ended without cleaning up (files removed; its log stays: %s); start it again with `mcpcall session start %s TARGET`", name, f.log(), name)}
		}
	}
	if c.f.era == "auto" {
		// Stateless requests share the gateway's upstream connection; an
		// initialize-era client would get a connection of its own, and
		// lose the state of the runs before it.
		c.f.era = "stateless"
	}
	return &target{
		url:     sessionURL,
		socket:  f.sock(),
		policy:  negotiate.TransportAuto,
		display: fmt.Sprintf("session %s (%s)", name, live.rec.Target),
	}, nil
}

// given reports whether the line says how to answer the server's
// requests: --elicit, --sampling-cmd, --sampling-llm or --root.
func (a *answerFlags) given() bool {
	return a.elicit != "" || a.samplingCmd != "" || a.samplingLLM.api != "" || len(a.roots) > 0
}

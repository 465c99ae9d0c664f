package main

import (
	"context"
	"sync"
	"time"
)

// exitGrace is how long the connection's shutdown may go on once the run
// is over its limit (--max-time) or interrupted (Ctrl-C): enough for the
// notifications/cancelled already on their way to go out, after which a
// stdio server is killed and an HTTP session's DELETE abandoned, so that
// mcpcall exits within half a second of the limit or the signal.
const exitGrace = 300 * time.Millisecond

// shutdownContext is the context of the connection's shutdown at the end
// of a run whose context is run: no bound while run lives (the transports
// take their usual grace), and exitGrace once run is done — from then on,
// or from the moment it ends during the shutdown.
func shutdownContext(run context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(run))
	var mu sync.Mutex
	var timer *time.Timer
	stop := context.AfterFunc(run, func() {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() == nil {
			timer = time.AfterFunc(exitGrace, cancel)
		}
	})
	return ctx, func() {
		cancel()
		stop()
		mu.Lock()
		if timer != nil {
			timer.Stop()
		}
		mu.Unlock()
	}
}

package bridge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anymcp/anymcp/client"
)

// Options bound and secure the bridge. The zero value is usable.
type Options struct {
	// StateKey seals input_required rounds' requestState (AES-GCM; 16, 24
	// or 32 bytes). Replicas behind one load balancer share it. Empty: a
	// random key for this process.
	StateKey []byte
	// ReplicaID names this process in the state it seals. Empty: random.
	ReplicaID string
	// AuthToken, when set, is the bearer token every HTTP request must carry
	// (compared in constant time). Required for a non-loopback listener.
	AuthToken string
	// AllowedOrigins are Origin values accepted besides loopback ones
	// (scheme://host[:port]); a request with any other Origin gets 403.
	AllowedOrigins []string
	// AllowedHosts are Host values accepted besides loopback ones.
	AllowedHosts []string
	// Secrets are values (the upstream's tokens, header values) removed
	// from any error text sent downstream.
	Secrets []string
	// Redact, when set, is applied too to any error text sent downstream.
	Redact func(string) string
	// MessagePath is where the /sse stream's endpoint event tells a
	// client to POST, default "/message": set it when Handler is served
	// under other paths (a gateway's /sse/VIEW posts to /message/VIEW).
	MessagePath string

	Logger *slog.Logger
	// Observer, when set, sees every downstream request (see Observer):
	// the otel module's ServerObserver makes a SERVER span of each.
	Observer Observer

	MaxBodyBytes   int64         // a request body, default 4 MiB
	MaxSessions    int           // initialize-era sessions at once, default 64
	MaxRounds      int           // input_required rounds pending at once, default 128
	MaxListeners   int           // subscriptions/listen streams at once, default 64
	QueueLen       int           // messages queued for one slow client before it is cut off, default 256
	RoundTimeout   time.Duration // how long a pending round waits for the client's retry, default 5 min
	SessionIdle    time.Duration // an idle session is ended after it, default 30 min
	CacheTTL       time.Duration // ttlMs on cacheable results the upstream gave none, default 0
	SettleInterval time.Duration // how long to gather an upstream's further input requests into one round, default 30 ms
	// EOFGrace is how long ServeStdio, once its input ends, lets the
	// requests already read finish, default 1.5 s: under the 2 s a stdio
	// client (this module's, the TypeScript and Python SDKs') waits after
	// closing stdin before SIGTERM. See ServeStdio.
	EOFGrace time.Duration
}

func (o *Options) defaults() {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 4 << 20
	}
	if o.MaxSessions <= 0 {
		o.MaxSessions = 64
	}
	if o.MaxRounds <= 0 {
		o.MaxRounds = 128
	}
	if o.MaxListeners <= 0 {
		o.MaxListeners = 64
	}
	if o.QueueLen <= 0 {
		o.QueueLen = 256
	}
	if o.RoundTimeout <= 0 {
		o.RoundTimeout = 5 * time.Minute
	}
	if o.SessionIdle <= 0 {
		o.SessionIdle = 30 * time.Minute
	}
	if o.SettleInterval <= 0 {
		o.SettleInterval = 30 * time.Millisecond
	}
	if o.EOFGrace <= 0 {
		o.EOFGrace = defaultEOFGrace
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MessagePath == "" {
		o.MessagePath = "/message"
	}
}

// Bridge serves one upstream MCP server to downstream clients of every
// era. It is safe for concurrent use.
type Bridge struct {
	o      Options
	dial   Dialer
	seal   *sealer
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc

	shared Upstream
	info   client.Info

	rounds       *roundTable
	dedupe       *dedupeTable
	sessions     *sessionTable
	httpSessions httpSessions
	legacy       legacyStreams
	listeners    *listenerHub

	toolHeaders toolHeaderCache
	lastRelist  atomic.Int64 // unix nanoseconds of the last listing for toolHeaders

	wg        sync.WaitGroup
	closeOnce sync.Once
}

// New dials the upstream through dial and returns a Bridge serving it. ctx
// bounds the dial only; Close ends the bridge.
func New(ctx context.Context, dial Dialer, o Options) (*Bridge, error) {
	o.defaults()
	s, err := newSealer(o.StateKey)
	if err != nil {
		return nil, err
	}
	if o.ReplicaID == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		o.ReplicaID = hex.EncodeToString(b[:])
	}
	bctx, cancel := context.WithCancel(context.Background())
	b := &Bridge{o: o, dial: dial, seal: s, log: o.Logger, ctx: bctx, cancel: cancel}
	b.rounds = newRoundTable(o.MaxRounds)
	b.dedupe = newDedupeTable()
	b.sessions = newSessionTable(o.MaxSessions)
	b.httpSessions.m = map[string]*httpSession{}
	b.legacy.m = map[string]*channel{}
	b.listeners = newListenerHub(b, o.MaxListeners, o.QueueLen)

	conn, err := dial(ctx, Downstream{Options: []client.Option{client.WithClientInfo("anymcp-bridge", "1")}, Changes: b.sharedChanges()})
	if err != nil {
		cancel()
		return nil, &UpstreamError{Op: "connecting", Err: err}
	}
	b.shared, b.info = conn, conn.Info()
	b.goTracked(b.reapSessions)
	return b, nil
}

// Info is what the upstream connection negotiated.
func (b *Bridge) Info() client.Info { return b.info }

// sharedChanges are the shared Conn's: list changes and resource updates
// go to every listening client.
func (b *Bridge) sharedChanges() Changes {
	c := b.listChanges()
	c.ResourceUpdated = func(uri string) { b.listeners.broadcast(changeResource, uri) }
	return c
}

// listChanges send an upstream connection's list changes to every
// listening client: the shared Conn's, and those of a call's own Conn (an
// initialize-era server may send them on the stream of the call that
// changed the list).
func (b *Bridge) listChanges() Changes {
	return Changes{
		Tools: func() {
			b.toolHeaders.forget()
			b.listeners.broadcast(changeTools, "")
		},
		Prompts:   func() { b.listeners.broadcast(changePrompts, "") },
		Resources: func() { b.listeners.broadcast(changeResources, "") },
	}
}

// Close ends every session and stream, gives up every pending round and
// closes the upstream connections.
func (b *Bridge) Close() error {
	var err error
	b.closeOnce.Do(func() {
		b.cancel()
		b.sessions.closeAll()
		b.listeners.closeAll()
		b.rounds.closeAll()
		b.wg.Wait()
		err = b.shared.Close()
	})
	return err
}

// go runs f on a goroutine Close waits for.
func (b *Bridge) goTracked(f func()) bool {
	if b.ctx.Err() != nil {
		return false
	}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		f()
	}()
	return true
}

// UpstreamError says the upstream could not be reached or failed a request
// for a reason other than a JSON-RPC error of its own.
type UpstreamError struct {
	Op  string
	Err error
}

func (e *UpstreamError) Error() string { return fmt.Sprintf("upstream: %s: %v", e.Op, e.Err) }
func (e *UpstreamError) Unwrap() error { return e.Err }

var errClosed = errors.New("the bridge is closed")

// defaultEOFGrace is EOFGrace's default (see Options).
const defaultEOFGrace = 1500 * time.Millisecond

// relistAllowed says whether the tools may be listed again now (at most
// once a second: a client naming unknown tools must not make the bridge
// list the upstream's tools at its own pace).
func (b *Bridge) relistAllowed() bool {
	now := time.Now().UnixNano()
	last := b.lastRelist.Load()
	return now-last >= int64(time.Second) && b.lastRelist.CompareAndSwap(last, now)
}

// reapSessions ends, every SessionIdle/4, the sessions idle longer than
// SessionIdle, until the bridge closes.
func (b *Bridge) reapSessions() {
	t := time.NewTicker(b.o.SessionIdle / 4)
	defer t.Stop()
	for {
		select {
		case now := <-t.C:
			b.reapIdle(now)
		case <-b.ctx.Done():
			return
		}
	}
}

// reapIdle ends the sessions idle since before now - SessionIdle; a
// session with a request in progress is never idle.
func (b *Bridge) reapIdle(now time.Time) int {
	gone := b.sessions.idle(now.Add(-b.o.SessionIdle))
	for _, s := range gone {
		s.close()
	}
	return len(gone)
}

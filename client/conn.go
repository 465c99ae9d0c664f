package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anymcp/anymcp/internal/jsondec"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/mcp"
	"github.com/anymcp/anymcp/negotiate"
)

// Conn is a live, initialized connection to one MCP server. It is safe for
// concurrent use: any number of calls may be in flight at once.
type Conn struct {
	t    jsonrpc.Transport
	opts *options

	nextID atomic.Int64
	gen    atomic.Int64 // counts successful initializations: the session in use
	barren atomic.Int32 // re-initializations since a request (not a recovery's own) was last answered
	// recoveredAt is when the latest re-initialization ended well (unix
	// nanoseconds); a session that lasted usefulSession from then on is
	// no barren one, though it answered nothing (an idle Conn's).
	recoveredAt   atomic.Int64
	usefulSession time.Duration
	d             atomic.Pointer[dialect] // the era's rules, once the era is known
	level         atomic.Pointer[mcp.LoggingLevel]
	// callLogs holds, by request id, the WithCallLogs function of each
	// request in flight that has one (notifications.go, callLog).
	callLogs sync.Map
	// streamOpen: the transport was asked for its stream of server
	// messages outside answers; streamSettled is closed once that
	// request returned (the stream open, refused, or slow to open).
	streamOpen    atomic.Bool
	streamSettled chan struct{}
	// answering counts the server's requests whose handlers run: while
	// any does, calls do not time out for want of an answer (the server
	// is waiting on the host).
	answering atomic.Int32

	droppedNotifications atomic.Int64           // dropped because the handlers were behind
	listChangePending    [listKinds]atomic.Bool // a list_changed of the kind waits for its handler

	// What the Conn tracks, each with a lock of its own (a leaf: nothing
	// else is locked while one is held) and its own bound.
	pending   pendingTable   // requests waiting for answers, by id (pending.go)
	tokens    progressTokens // calls that want progress, by token (progress_tokens.go)
	served    servedTable    // the server's requests being answered (served.go)
	taskWakes taskWakes      // calls waiting for a task, by its id (task_wakes.go)
	subs      subscriptions  // resources subscribed to (subscriptions.go)
	results   *resultCache   // cached list and read answers (cache.go)
	states    stateWatch     // the Conn's State, and who waits for a change (state.go)
	clock     clock          // the calls' timeouts (clock.go)

	// mu guards the Conn's own state below. Lock order: mu may be held
	// while one of the tables above is locked, never the other way.
	mu       sync.Mutex
	err      error // why the Conn is done; nil while it lives
	info     Info
	recovery *recovery // the re-initialization in progress, if any
	tools    toolNotes // what tools/list said of each tool (toolnotes.go)
	listen   *listener // the subscriptions/listen stream (stateless era)
	openedAt time.Time // when the observer was told the Conn opened

	observedOpen atomic.Bool // the observer was told the Conn opened, not yet that it closed

	ctx     context.Context // cancelled by Close: stops handlers
	cancel  context.CancelFunc
	events  *eventQueue
	wg      sync.WaitGroup // read loop, handlers, cancellation senders
	cancels sync.WaitGroup // cancellation senders, which Close lets finish
	done    chan struct{}  // closed when the read loop has ended
	once    sync.Once
	gone    chan struct{} // closed once Shutdown's goroutines are all gone
}

// Info describes what was negotiated with the server.
type Info struct {
	Transport string  // "streamable-http", "sse", "stdio", or a custom transport's name
	Era       mcp.Era // mcp.EraStateless (2026-07-28 on: stateless) or mcp.EraInitialize (initialize)
	// ProtocolVersion is the revision in use: the one every stateless request
	// carries, or the one the initialize answer named.
	ProtocolVersion string
	// SupportedVersions are the revisions a stateless server listed in its
	// server/discover answer; nil for an initialize-era server.
	SupportedVersions []string
	ServerInfo        mcp.Implementation
	Capabilities      mcp.ServerCapabilities
	Instructions      string
	// Negotiation is the report of how the era (and, for a URL, the
	// transport) was found: every attempt, what it got, and why the next
	// one followed.
	Negotiation *negotiate.Report
}

// Open connects over t, a transport the host made: it finds the server's
// era (the stateless probe, server/discover, then initialize if that is not
// answered as a stateless server answers; see WithProbeTimeout) and finishes
// the handshake. On success the Conn owns t; on failure t is closed. ctx
// bounds the handshake only (when ctx has no deadline, the request timeout
// does, as for Dial).
func Open(ctx context.Context, t jsonrpc.Transport, opts ...Option) (*Conn, error) {
	o := newOptions(opts)
	if o.transportName == "" {
		o.transportName = "custom"
	}
	ctx, cancel := bounded(ctx, o)
	defer cancel()
	return handshake(ctx, t, o)
}

// newConn starts the Conn's read loop over t.
func newConn(t jsonrpc.Transport, o *options) *Conn {
	if o.hook != nil {
		t = &hooked{Transport: t, hook: o.hook}
	}
	c := &Conn{
		t:             t,
		opts:          o,
		streamSettled: make(chan struct{}),
		pending:       newPendingTable(),
		tokens:        newProgressTokens(),
		served:        newServedTable(),
		subs:          newSubscriptions(),
		results:       newResultCache(),
		events:        newEventQueue(o.logger),
		usefulSession: usefulSession,
		gone:          make(chan struct{}),
		done:          make(chan struct{}),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.clock.busy = func() bool { return c.answering.Load() > 0 }
	c.info.Transport = o.transportName
	jsonrpc.TakeAnswers(t, c.take)
	c.wg.Add(1)
	go c.readLoop()
	return c
}

// finishInitialize checks the initialize result, records what it says and
// sends notifications/initialized.
func (c *Conn) finishInitialize(ctx context.Context, offered string, raw json.RawMessage) error {
	var res mcp.InitializeResult
	if err := jsondec.Unmarshal(raw, &res); err != nil {
		return fmt.Errorf("initialize: decoding result: %w", err)
	}
	if !mcp.IsInitializeVersion(res.ProtocolVersion) || (c.opts.version != "" && res.ProtocolVersion != c.opts.version) {
		return &VersionError{Offered: offered, Got: res.ProtocolVersion, Pinned: c.opts.version != ""}
	}
	c.mu.Lock()
	transport := c.info.Transport
	c.mu.Unlock()
	d := newDialect(mcp.EraInitialize, res.ProtocolVersion, transport, &res.Capabilities, c.opts)
	c.mu.Lock()
	c.info.Era = d.era
	c.info.ProtocolVersion = res.ProtocolVersion
	c.info.ServerInfo = res.ServerInfo
	c.info.Capabilities = res.Capabilities
	c.info.Instructions = res.Instructions
	c.mu.Unlock()
	c.d.Store(d)
	c.results.clear() // a new session may see other lists
	c.gen.Add(1)
	if err := c.Notify(ctx, "notifications/initialized", nil); err != nil {
		return err
	}
	if c.opts.listens() {
		c.openStream()
	}
	c.setState(StateReady)
	return nil
}

// listens reports whether the host listens for what a server sends
// outside the answers to its calls: notifications, or requests of its own.
func (o *options) listens() bool {
	return o.onLog != nil || o.onToolsChg != nil || o.onResChg != nil || o.onPromptsChg != nil ||
		o.onResUpdated != nil || o.onCancelled != nil || o.onNotify != nil ||
		o.sampling != nil || o.elicitForm != nil || o.elicitURL != nil || o.roots != nil
}

// openStream asks the transport, once, for its stream of server messages
// outside answers (Streamable HTTP's standalone GET stream, which a Conn
// opens only when something will listen: a handler, a subscription, a
// call that wants progress).
func (c *Conn) openStream() {
	if c.streamOpen.CompareAndSwap(false, true) {
		jsonrpc.OpenStream(c.t)
		close(c.streamSettled)
	}
}

// finishDiscover records what a stateless server's server/discover answer
// says (a stateless server without server/discover answered -32601: then
// there is nothing to record) and makes the Conn speak revision version.
func (c *Conn) finishDiscover(version string, resp *jsonrpc.Message) error {
	var res mcp.DiscoverResult
	if resp.Error == nil {
		if err := jsondec.Unmarshal(resp.Result, &res); err != nil {
			return fmt.Errorf("server/discover: decoding result: %w", err)
		}
	}
	c.noteDiscovered(version, &res)
	return nil
}

// noteDiscovered makes the Conn speak revision version of the stateless era to
// the server that answered res (the zero result for one without
// server/discover), and ready.
func (c *Conn) noteDiscovered(version string, res *mcp.DiscoverResult) {
	c.mu.Lock()
	transport := c.info.Transport
	c.mu.Unlock()
	d := newDialect(mcp.EraStateless, version, transport, &res.Capabilities, c.opts)
	c.mu.Lock()
	c.info.Era = d.era
	c.info.ProtocolVersion = version
	c.info.SupportedVersions = res.SupportedVersions
	c.info.ServerInfo = res.Server()
	c.info.Capabilities = res.Capabilities
	c.info.Instructions = res.Instructions
	c.mu.Unlock()
	c.d.Store(d)
	c.gen.Add(1)
	c.setState(StateReady)
}

// dialect returns the rules of the era in use.
func (c *Conn) dialect() *dialect {
	if d := c.d.Load(); d != nil {
		return d
	}
	return preEraDialect
}

// logLevelFor returns the log level a stateless request carries in _meta:
// the one SetLogLevel chose, else info when the host listens to logs
// (OnLog), else none (and the server sends no log records).
func (c *Conn) logLevelFor(d *dialect) mcp.LoggingLevel {
	if d.meta == nil {
		return ""
	}
	if l := c.level.Load(); l != nil {
		return *l
	}
	if c.opts.onLog != nil {
		return mcp.LevelInfo
	}
	return ""
}

// Info returns what was negotiated.
func (c *Conn) Info() Info {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.info
}

// Err returns why the Conn stopped working, or nil while it works.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Done is closed when the Conn stops receiving: after Close, or when the
// transport broke (Err says why).
func (c *Conn) Done() <-chan struct{} { return c.done }

// Close ends the connection: pending calls fail with ErrClosed, the
// transport is closed (for HTTP, the session is deleted; for stdio, the
// process is stopped), and Close returns once every goroutine the Conn
// started is gone. It is idempotent; later calls return nil. It is
// Shutdown with no bound but the transports' own: up to a second for
// notifications/cancelled still on their way, then for stdio the
// Command's StdinCloseWait and TermWait (2 s each by default), for
// Streamable HTTP the DELETE's CloseTimeout (2 s).
//
// Called from one of the Conn's own handlers (a notification handler, a
// sampling, elicitation or roots handler), Close starts the shutdown and
// returns at once: the shutdown waits for that handler to return.
func (c *Conn) Close() error {
	return c.Shutdown(context.Background())
}

// Shutdown is Close bounded by ctx. notifications/cancelled already on
// their way still go first, as with Close, but once ctx is done nothing is
// waited for: a stdio server's process group is killed, an HTTP session's
// DELETE abandoned (a transport of the host's is closed with its Shutdown
// method, when it has one: see jsonrpc.Shutdowner). Shutdown returns once
// every goroutine the Conn started is gone — or, when ctx ends while a
// handler of the host's still runs (one that blocks, or ignores its
// context), at once with an error that says so: the handler's goroutine
// ends when the handler returns, and a later Close waits for it without a
// bound.
func (c *Conn) Shutdown(ctx context.Context) error {
	if c.inHandler() {
		go c.Shutdown(context.WithoutCancel(ctx)) //nolint:errcheck // the handler cannot wait for itself
		return nil
	}
	var err error
	c.once.Do(func() {
		c.fail(ErrClosed, true) // calls in flight may have run
		c.setState(StateClosed)
		flushed := c.flushCancellations(ctx)
		err = jsonrpc.Shutdown(ctx, c.t)
		if errors.Is(err, jsonrpc.ErrClosed) {
			err = nil
		}
		c.cancel()
		c.clock.close()
		go func() {
			c.wg.Wait()
			<-flushed
			c.events.close()
			close(c.gone)
		}()
	})
	select {
	case <-c.gone:
		return err
	case <-ctx.Done():
	}
	if c.hostCodeRunning() {
		return errors.Join(err, fmt.Errorf("anymcp: shutdown: %w, with handlers of the host still running", context.Cause(ctx)))
	}
	<-c.gone // the Conn's own goroutines, which end by themselves now
	return err
}

// hostCodeRunning reports whether a handler of the host's runs, or waits
// to run, on one of the Conn's goroutines.
func (c *Conn) hostCodeRunning() bool {
	return c.events.running.Load() || c.events.len() > 0 || c.answering.Load() > 0
}

// flushCancellations gives notifications/cancelled already on their way a
// moment (closeFlushWait, or less when ctx ends first) to reach the server
// before the transport closes.
// It returns a channel closed once its helper goroutine is gone.
func (c *Conn) flushCancellations(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	go func() { c.cancels.Wait(); close(done) }()
	t := time.NewTimer(closeFlushWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		c.opts.logger.Debug("anymcp: closing with notifications/cancelled still unsent")
	case <-ctx.Done():
		c.opts.logger.Debug("anymcp: shutting down with notifications/cancelled still unsent: out of time")
	}
	return done
}

// closeFlushWait bounds how long Close waits for notifications/cancelled.
const closeFlushWait = time.Second

// fail marks the Conn done with err and fails every pending call. lost
// says the calls' answers were lost in a broken transport.
func (c *Conn) fail(err error, lost bool) {
	c.mu.Lock()
	ends := c.err == nil
	if ends {
		c.err = err
	}
	first := c.err
	c.mu.Unlock()
	c.pending.close(first) // no call joins the table from now on
	c.failPending(err, lost)
	c.setState(StateClosed)
	if ends {
		c.closed(err)
	}
}

// failPending fails every call waiting for an answer — but for a lost
// session, only those the transport says it left unanswered, when it can
// tell (a supervised stdio server's dead process), else all but those a
// re-initialization sends (they belong to the next session).
func (c *Conn) failPending(err error, lost bool) {
	var keep func(id int64, cl *call) bool // nil: none
	if sl, session := err.(*jsonrpc.SessionLostError); session {
		keep = func(id int64, cl *call) bool { return cl.recovery }
		if sl.UnansweredKnown {
			gone := make(map[int64]bool, len(sl.Unanswered))
			for _, id := range sl.Unanswered {
				if n, ok := id.Int64(); ok {
					gone[n] = true
				}
			}
			keep = func(id int64, _ *call) bool { return !gone[id] }
		}
	}
	for _, cl := range c.pending.drain(keep) {
		var e error = err
		if lost {
			e = &LostError{Method: cl.method, Err: err}
		}
		cl.finish(nil, e)
	}
}

// readLoop receives every message and routes it.
func (c *Conn) readLoop() {
	defer c.wg.Done()
	defer close(c.done)
	for {
		msg, err := c.t.Recv()
		if gap, ok := errors.AsType[*jsonrpc.GapError](err); ok {
			// The session goes on, but what the server said meanwhile
			// is lost: every change it could have announced is taken
			// as made.
			c.opts.logger.Info("anymcp: messages from the server may be lost; its lists and subscribed resources are taken as changed", "err", gap)
			c.missedChanges(c.announced())
			continue
		}
		var lost *jsonrpc.SessionLostError
		if errors.As(err, &lost) {
			// The transport goes on with a new session, which the Conn
			// initializes. Unless each request's own exchange settles it,
			// what was in flight lost its answer. The session lost is the
			// Conn's current one: a re-initialization's answer comes
			// through this loop, after this.
			gen := c.gen.Load()
			c.opts.logger.Warn("anymcp: session lost; re-initializing", "err", err)
			// The recovery first: a call failed here and sent again
			// (safe to repeat) then finds it under way and waits for it,
			// rather than going out before the new session's opening
			// request.
			c.startRecovery(lost, gen)
			if !lost.AnswersFollow {
				c.failPending(lost, true)
			}
			continue
		}
		if err != nil {
			if errors.Is(err, jsonrpc.ErrClosed) {
				c.fail(ErrClosed, false)
			} else {
				// Calls waiting for an answer fail with err, which says
				// it to their callers; with none, only the log does.
				level := slog.LevelWarn
				if c.pending.len() > 0 {
					level = slog.LevelDebug
				}
				c.opts.logger.Log(context.Background(), level, "anymcp: transport ended", "err", err)
				c.fail(err, true)
			}
			return
		}
		switch {
		case msg.IsResponse():
			c.deliver(msg)
		case msg.IsRequest():
			c.serve(msg)
		case msg.IsNotification():
			c.notification(msg)
		default:
			c.opts.logger.Warn("anymcp: dropped a message that is neither request, response nor notification", "id", msg.ID.String())
		}
	}
}

// deliver hands a response to the call waiting for it.
func (c *Conn) deliver(msg *jsonrpc.Message) {
	if c.take(msg) {
		return
	}
	if msg.ID.IsZero() && msg.Error != nil {
		c.opts.logger.Warn("anymcp: server sent an error without an id", "err", msg.Error)
		return
	}
	c.opts.logger.Warn("anymcp: dropped a response to an unknown id", "id", msg.ID.String())
}

// take hands a response to the call waiting for it and reports whether
// one was. The read loop calls it, and so does a transport that hands
// over an answer directly (jsonrpc.AnswerTaker); it never blocks.
func (c *Conn) take(msg *jsonrpc.Message) bool {
	id, ok := msg.ID.Int64()
	if !ok {
		return false
	}
	cl := c.pending.take(id)
	if cl == nil {
		return false
	}
	if !cl.recovery && c.barren.Load() != 0 {
		c.barren.Store(0) // the session in use serves requests
	}
	if msg.Error != nil {
		cl.finish(nil, msg.Error)
	} else {
		cl.finish(msg.Result, nil)
	}
	return true
}

// marshalParams encodes params; nil stays absent.
func marshalParams(params any) (json.RawMessage, error) {
	switch p := params.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return p, nil
	case []byte:
		return p, nil
	}
	return json.Marshal(params)
}

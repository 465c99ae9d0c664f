package fleet

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/mcp"
)

// member is one server of the fleet: its configuration, its Conn (or why
// it has none), its backoff and its catalogue caches.
type member struct {
	f       *Fleet
	srv     Server
	prefix  string // of its fleet names: unique in the fleet
	timeout time.Duration

	mu      sync.Mutex
	state   State
	since   time.Time
	err     *ServerError
	conn    *client.Conn
	info    *client.Info
	stdio   bool          // the Conn runs a process: idle stops apply
	dialing chan struct{} // closed when the dial under way ends
	retryAt time.Time     // a Failed server is not dialled before
	bo      *backoff.ExponentialBackOff
	busy    int         // fleet calls in flight and holds out (Fleet.Hold)
	idle    *time.Timer // stops an idle stdio server
	idleGen uint64      // bumped by every use: an older timer does nothing
	lists   [kinds]listCache
	tools   toolIndex
	prompts promptIndex
}

func newMember(f *Fleet, s Server) *member {
	m := &member{f: f, srv: s, timeout: s.ConnectTimeout, since: time.Now()}
	if m.timeout <= 0 {
		m.timeout = f.opts.connectTimeout
	}
	m.bo = backoff.NewExponentialBackOff()
	m.bo.InitialInterval = f.opts.retry.InitialDelay
	m.bo.MaxInterval = f.opts.retry.MaxDelay
	m.bo.Multiplier = f.opts.retry.Multiplier
	m.bo.RandomizationFactor = f.opts.retry.Jitter // servers that failed together are not all tried again together
	m.bo.MaxElapsedTime = 0
	m.bo.Reset()
	if s.Disabled {
		m.state = StateDisabled
		m.err = &ServerError{Server: s.Name, Kind: KindDisabled}
	}
	return m
}

func (m *member) name() string { return m.srv.Name }

// setStateLocked moves the member to s, with err when Failed, and tells
// the host.
func (m *member) setStateLocked(s State, err *ServerError) {
	if m.state == s && s != StateFailed {
		return
	}
	m.state, m.err, m.since = s, err, time.Now()
	if m.f.ev != nil {
		m.f.ev.push(m.statusLocked())
	}
}

func (m *member) statusLocked() Status {
	return Status{Server: m.srv.Name, State: m.state, Err: m.err, Since: m.since, Info: m.info}
}

func (m *member) status() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.statusLocked()
}

// acquire returns the member's Conn, dialling it when there is none (and
// the backoff allows), and counts a use until release.
func (m *member) acquire(ctx context.Context) (*client.Conn, error) {
	tried := false
	for {
		m.mu.Lock()
		if m.state == StateClosed || m.f.isClosed() {
			m.mu.Unlock()
			return nil, &ServerError{Server: m.name(), Kind: KindClosed, Err: ErrClosed}
		}
		if m.state == StateDisabled {
			err := m.err
			m.mu.Unlock()
			return nil, err
		}
		if c := m.conn; c != nil {
			select {
			case <-c.Done():
				m.connEndedLocked(c)
			default:
				m.busy++
				m.idleGen++
				if m.idle != nil {
					m.idle.Stop()
				}
				m.mu.Unlock()
				return c, nil
			}
		}
		if m.dialing == nil {
			if tried || (m.state == StateFailed && time.Now().Before(m.retryAt)) {
				err := m.err
				m.mu.Unlock()
				return nil, err
			}
			if !m.startDialLocked() {
				m.mu.Unlock()
				continue // the fleet closed: said at the top
			}
		}
		ch := m.dialing
		tried = true
		m.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	}
}

// release ends a use of acquire; the last one arms the idle stop.
func (m *member) release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.busy--
	m.armIdleLocked()
}

// startDial starts dialling a member that is not connected (WithEager).
func (m *member) startDial() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.conn == nil && m.dialing == nil && m.state != StateDisabled {
		m.startDialLocked()
	}
}

func (m *member) startDialLocked() bool {
	ch := make(chan struct{})
	if !m.f.goTracked(func() { m.dial(ch) }) {
		return false
	}
	m.dialing = ch
	m.setStateLocked(StateConnecting, nil)
	return true
}

// dial connects the member within its timeout, once it has a slot
// (WithMaxDials, WithMaxSpawns), and records the Conn or the failure.
func (m *member) dial(done chan struct{}) {
	var c *client.Conn
	var err error
	ref := &connRef{}
	slots := m.f.dials
	if m.srv.Target.IsCommand() {
		slots = m.f.spawns
	}
	select {
	case slots <- struct{}{}:
		free := sync.OnceFunc(func() { <-slots })
		if g := m.f.opts.startupGrace; g > 0 {
			// Past the grace the server is only waited for: its slot goes
			// to the next.
			t := time.AfterFunc(g, free)
			defer t.Stop()
		}
		ctx, cancel := context.WithTimeout(m.f.ctx, m.timeout)
		opts := slices.Concat(m.hostOptions(), m.srv.Options, m.cacheOptions(ref))
		m.f.opts.logger.Debug("dialling", "server", m.name(), "target", m.srv.Target.String())
		c, err = client.Dial(ctx, m.srv.Target, opts...)
		cancel()
		free()
	case <-m.f.ctx.Done():
		err = ErrClosed
	}
	if err != nil && m.f.ctx.Err() != nil {
		err = ErrClosed
	}

	m.mu.Lock()
	defer m.mu.Unlock()
	defer close(done)
	ref.c = c
	m.dialing = nil
	if err != nil {
		se := serverError(m.name(), err)
		m.retryAt = time.Now().Add(m.bo.NextBackOff())
		m.f.opts.logger.Info("server failed", "server", m.name(), "kind", se.Kind, "err", err)
		m.setStateLocked(StateFailed, se)
		return
	}
	if m.f.isClosed() { // Close is waiting for this goroutine, then closes m.conn
		m.conn = c
		return
	}
	info := c.Info()
	m.conn, m.info = c, &info
	m.stdio = info.Transport == client.TransportStdio
	m.bo.Reset()
	m.retryAt = time.Time{}
	m.invalidateLocked(allKinds...)
	m.setStateLocked(StateReady, nil)
	m.armIdleLocked()
}

// connRef is the Conn a dial's handlers belong to, once Dial returned:
// a handler of a Conn the member no longer holds does nothing.
type connRef struct{ c *client.Conn }

// hostOptions are the fleet-wide handlers, told the server's name. They
// come before the server's own options: a handler that answers
// (sampling, elicitation, roots) the server's own replaces; its OnLog
// runs after the fleet's.
func (m *member) hostOptions() []client.Option {
	o, name := &m.f.opts, m.name()
	opts := []client.Option{client.WithLogger(o.logger.With("server", name))}
	if h := o.sampling; h != nil {
		opts = append(opts, client.WithSampling(func(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
			return h(ctx, name, p)
		}))
	}
	if h := o.elicitation; h != nil {
		eh := func(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) { return h(ctx, name, p) }
		opts = append(opts, client.WithElicitation(eh), client.WithURLElicitation(eh))
	}
	if h := o.roots; h != nil {
		opts = append(opts, client.WithRoots(func(ctx context.Context) ([]mcp.Root, error) { return h(ctx, name) }))
	}
	if h := o.onLog; h != nil {
		opts = append(opts, client.OnLog(func(p mcp.LoggingMessageParams) { h(name, p) }))
	}
	return opts
}

// cacheOptions are the handlers that keep the member's state and caches:
// they come after the server's own, which run too (client's On… options
// add up).
func (m *member) cacheOptions(ref *connRef) []client.Option {
	on := func(f func()) func() {
		return func() {
			m.mu.Lock()
			defer m.mu.Unlock()
			if ref.c != nil && m.conn == ref.c {
				f()
			}
		}
	}
	heard := func(ks ...kind) func() {
		return func() {
			m.invalidateLocked(ks...)
			if h := m.f.opts.onHeard; h != nil {
				h(m.name(), ks[0])
			}
		}
	}
	return []client.Option{
		client.OnToolsChanged(on(heard(kindTools))),
		client.OnPromptsChanged(on(heard(kindPrompts))),
		client.OnResourcesChanged(on(heard(kindResources, kindTemplates))),
		client.OnReinitialized(func(info client.Info) {
			on(func() {
				m.info = &info
				heard(allKinds...)()
			})()
		}),
		client.OnStateChange(func(_, to client.State) {
			on(func() {
				switch to {
				case client.StateReady:
					m.setStateLocked(StateReady, nil)
				case client.StateReconnecting:
					m.setStateLocked(StateReconnecting, nil)
				case client.StateClosed:
					m.connEndedLocked(ref.c)
				}
			})()
		}),
	}
}

// connEndedLocked retires c, the member's Conn, which ended by itself:
// the server is Failed (kind "closed"), and the next use dials again at
// once (its failure, if it fails, starts the backoff).
func (m *member) connEndedLocked(c *client.Conn) {
	if !m.f.goTracked(func() { c.Close() }) {
		return // Close closes it
	}
	cause := c.Err()
	if cause == nil {
		cause = client.ErrClosed
	}
	m.conn, m.info = nil, nil
	m.retryAt = time.Now()
	m.invalidateLocked(allKinds...)
	m.f.opts.logger.Info("connection ended", "server", m.name(), "err", cause)
	m.setStateLocked(StateFailed, &ServerError{Server: m.name(), Kind: KindClosed, Err: cause})
}

// armIdleLocked starts the idle stop of a stdio server no call uses.
func (m *member) armIdleLocked() {
	d := m.f.opts.idleStop
	if d <= 0 || !m.stdio || m.busy > 0 || m.conn == nil {
		return
	}
	m.idleGen++
	gen := m.idleGen
	if m.idle != nil {
		m.idle.Stop()
	}
	m.idle = time.AfterFunc(d, func() { m.idleStop(gen) })
}

// idleStop stops the server if nothing used it since the timer of gen
// was armed.
func (m *member) idleStop(gen uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.conn
	if gen != m.idleGen || m.busy > 0 || c == nil || m.state != StateReady {
		return
	}
	stop := func() {
		c.Close()
		m.mu.Lock()
		defer m.mu.Unlock()
		// Stopped once the process is gone, unless a use came meanwhile
		// (it dialled anew) or the fleet closed.
		if m.conn == nil && m.dialing == nil && m.state == StateReady {
			m.f.opts.logger.Info("stopped an idle server", "server", m.name(), "idle", m.f.opts.idleStop)
			m.setStateLocked(StateStopped, nil)
		}
	}
	if !m.f.goTracked(stop) {
		return
	}
	m.conn, m.info = nil, nil
}

// close ends the member for good (Fleet.Close, once no dial is left).
func (m *member) close() error {
	m.mu.Lock()
	c := m.conn
	m.conn, m.info = nil, nil
	m.idleGen++
	if m.idle != nil {
		m.idle.Stop()
	}
	m.setStateLocked(StateClosed, nil)
	m.mu.Unlock()
	if c == nil {
		return nil
	}
	if err := c.Close(); err != nil {
		return fmt.Errorf("server %s: %w", m.name(), err)
	}
	return nil
}

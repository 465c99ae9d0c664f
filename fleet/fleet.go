package fleet

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anymcp/anymcp/client"
)

// Server is one server of a fleet, as the host configures it.
type Server struct {
	// Name is the host's name for the server: unique in the fleet, not
	// empty, any string (it is cleaned for fleet names).
	Name    string
	Target  client.Target
	Options []client.Option // the server's own: headers, auth, era, reconnect policy...
	// Disabled servers are listed in Status and in every catalogue's
	// Errors (kind "disabled"), and never dialled.
	Disabled bool
	// Allow and Deny are path.Match patterns over the server's tool
	// names: an empty Allow lets every tool in; Deny wins.
	Allow, Deny []string
	// ConnectTimeout bounds this server's dial and first listing; 0 takes
	// the fleet's (WithConnectTimeout).
	ConnectTimeout time.Duration
}

// Fleet is many servers behind one catalogue. It is safe for concurrent
// use. Its methods dial servers they need that are not connected yet,
// WithMaxDials (URLs) and WithMaxSpawns (commands) starting at a time,
// each bounded by its own connect timeout.
type Fleet struct {
	opts     options
	members  []*member // sorted by name
	byName   map[string]*member
	byPrefix map[string]*member
	dials    chan struct{} // one token per URL dial starting (WithMaxDials)
	spawns   chan struct{} // one token per command starting (WithMaxSpawns)
	ev       *events       // nil without OnStateChange

	ctx    context.Context // ends at Close: every dial's parent
	cancel context.CancelFunc

	mu     sync.Mutex // guards closed and wg.Add
	closed bool
	wg     sync.WaitGroup // dials and idle stops under way
}

// New makes a fleet of servers. It checks their names (unique, not empty)
// and their Allow and Deny patterns, and dials nothing (unless WithEager).
func New(servers []Server, opts ...Option) (*Fleet, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	f := &Fleet{
		opts:     o,
		byName:   make(map[string]*member, len(servers)),
		byPrefix: make(map[string]*member, len(servers)),
		dials:    make(chan struct{}, o.maxDials),
		spawns:   make(chan struct{}, o.maxSpawns),
	}
	names := make([]string, 0, len(servers))
	for i, s := range servers {
		if s.Name == "" {
			return nil, fmt.Errorf("server %d has no name", i)
		}
		if _, dup := f.byName[s.Name]; dup {
			return nil, fmt.Errorf("two servers are named %q", s.Name)
		}
		for _, p := range slices.Concat(s.Allow, s.Deny) {
			if _, err := path.Match(p, ""); err != nil {
				return nil, fmt.Errorf("server %q: tool pattern %q: %w", s.Name, p, err)
			}
		}
		m := newMember(f, s)
		f.byName[s.Name] = m
		f.members = append(f.members, m)
		names = append(names, s.Name)
	}
	slices.SortFunc(f.members, func(a, b *member) int { return strings.Compare(a.srv.Name, b.srv.Name) })
	for name, p := range serverPrefixes(names) {
		m := f.byName[name]
		m.prefix = p
		f.byPrefix[p] = m
	}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	if o.onState != nil {
		f.ev = newEvents(o.onState, o.logger, f.Status())
	}
	if o.eager {
		for _, m := range f.members {
			m.startDial()
		}
	}
	return f, nil
}

// goTracked runs fn on a goroutine Close waits for; false when the fleet
// is closed (fn does not run).
func (f *Fleet) goTracked(fn func()) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		fn()
	}()
	return true
}

func (f *Fleet) isClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// member returns the server named name, or a ServerError.
func (f *Fleet) member(name string) (*member, error) {
	m, ok := f.byName[name]
	if !ok {
		return nil, fmt.Errorf("no server named %q in the fleet", name)
	}
	return m, nil
}

// Conn returns the connection to server, dialling it if need be: the
// escape hatch to everything a Conn offers. The fleet keeps owning it:
// do not Close it. Conn does not hold it: once no call of the fleet's
// uses it, WithIdleStop may stop a stdio server under a host that keeps
// its Conn; Hold holds it.
func (f *Fleet) Conn(ctx context.Context, server string) (*client.Conn, error) {
	c, release, err := f.Hold(ctx, server)
	if err != nil {
		return nil, err
	}
	release()
	return c, nil
}

// Hold returns the connection to server, dialling it if need be, in use
// by the host until it calls release: as during a call of the fleet's,
// WithIdleStop does not stop the server while a hold is out, and the
// idle time starts again when the last one is released. release may be
// called more than once, and after Close; Close closes the Conn held or
// not. The fleet keeps owning the Conn: do not Close it.
func (f *Fleet) Hold(ctx context.Context, server string) (c *client.Conn, release func(), err error) {
	m, err := f.member(server)
	if err != nil {
		return nil, nil, err
	}
	c, err = m.acquire(ctx)
	if err != nil {
		return nil, nil, err
	}
	// Released once however often it is called: a flag, cheaper per
	// call than sync.OnceFunc.
	var done atomic.Bool
	return c, func() {
		if done.CompareAndSwap(false, true) {
			m.release()
		}
	}, nil
}

// Status returns every server's state, sorted by name.
func (f *Fleet) Status() []Status {
	out := make([]Status, len(f.members))
	for i, m := range f.members {
		out[i] = m.status()
	}
	return out
}

// Close ends the fleet: dials under way are abandoned, every Conn is
// closed (every stdio server's process group is gone when it returns),
// and every goroutine of the fleet has ended. Later calls return
// ErrClosed; Close itself is idempotent.
func (f *Fleet) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	f.mu.Unlock()
	f.cancel()
	f.wg.Wait() // no dial or idle stop is left to hand over a Conn
	var wg sync.WaitGroup
	errs := make([]error, len(f.members))
	for i, m := range f.members {
		wg.Go(func() { errs[i] = m.close() })
	}
	wg.Wait()
	if f.ev != nil {
		f.ev.close()
	}
	return errors.Join(errs...)
}

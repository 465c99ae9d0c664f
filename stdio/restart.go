package stdio

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/anymcp/anymcp/internal/retry"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/reconnect"
)

// Supervision (Command.Restart). A supervised Transport is a front for a
// series of process transports, one per process, each of which ends with
// its process exactly as an unsupervised transport does. The supervisor's
// goroutine (run) waits for the current one to end, decides with the
// restart policy whether another follows, waits, and starts it. Recv walks
// the series in order: the messages of one process, then its end (a
// *jsonrpc.SessionLostError), then the next process. Send goes to the
// current process, except between a death and the first initialize
// request written to the new process, when it refuses everything else.

// life is one process of the series, as Recv sees it.
type life struct {
	t *Transport
	// decided is closed once the supervisor knows what follows the end
	// of t; restart, set before, says whether a new process does.
	decided chan struct{}
	restart bool
	// nextCh is closed once the next process is up (next is set before),
	// or when none will come (next stays nil).
	nextCh chan struct{}
	next   *life
}

func newLife(t *Transport) *life {
	return &life{t: t, decided: make(chan struct{}), nextCh: make(chan struct{})}
}

// supervisor keeps a Command's server running under its restart policy.
type supervisor struct {
	cmd    Command
	policy reconnect.Policy
	log    *slog.Logger
	ctx    context.Context // canceled by close; ends every wait of run
	cancel context.CancelFunc
	done   chan struct{} // closed when run has returned
	closed atomic.Bool   // close was called (set with mu held)
	sh     *shared       // shared with every process's Transport

	mu       sync.Mutex
	cur      *Transport // the process in service; nil between a death and the next start
	last     *Transport // the process started last, for Pid and StderrTail
	needInit bool       // the session died with a process: only an opening request (initialize, server/discover) may be sent
	lastExit *ExitError // the latest death
	terminal error      // the end of the transport, once supervision gave up
	restarts int
	changed  chan struct{} // closed and replaced whenever cur, terminal or closed change

	// unanswered holds, per process, the ids of the requests written to it
	// whose response it has not sent: what its death leaves unanswered.
	unanswered map[*Transport]*pendingIDs

	closeOnce sync.Once
	closeErr  error

	// Recv's position; only the goroutine inside Recv uses these.
	rl   *life
	lost bool // Recv has reported the end of rl.t; it goes on with rl.next
}

// startSupervised starts the first process and the supervisor. A first
// process that cannot be started is an error, as without supervision.
func startSupervised(cmd Command) (*Transport, error) {
	sh := newShared()
	var sup atomic.Pointer[supervisor]
	sh.answered = func(t *Transport, id jsonrpc.ID) bool {
		if s := sup.Load(); s != nil {
			return s.answered(t, id)
		}
		return false
	}
	t, err := startProcess(cmd, sh)
	if err != nil {
		return nil, err
	}
	log := cmd.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &supervisor{
		cmd:     cmd,
		policy:  *cmd.Restart, // a copy: the caller may reuse its value
		log:     log,
		ctx:     ctx,
		cancel:  cancel,
		done:    make(chan struct{}),
		cur:     t,
		last:    t,
		changed: make(chan struct{}),
		sh:      sh,
	}
	sup.Store(s) // before any request can be sent, so before any answer
	l := newLife(t)
	s.rl = l
	go s.run(l)
	return &Transport{sup: s, sh: sh}, nil
}

// broadcast wakes the Sends waiting for a change. mu must be held.
func (s *supervisor) broadcast() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *supervisor) latest() *Transport {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

func (s *supervisor) restartCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.restarts
}

// run is the supervisor's goroutine: it follows l, the process in service,
// to its end, and starts the next one while the policy allows.
//
// Progress: a process that got somewhere makes the policy's run of failed
// attempts start over when it dies. It got somewhere when it sent a message
// other than the answer to an opening request (initialize, server/discover)
// — answered a call, sent a notification or a request of its own — or
// lived usefulLife. A server that answers the handshake and then always
// dies is thus restarted as the policy says, and given up on when its
// attempts run out, not restarted at the policy's first wait forever.
func (s *supervisor) run(l *life) {
	defer close(s.done)
	b := retry.Start(s.policy)
	for {
		select {
		case <-l.t.done:
		case <-s.ctx.Done():
			return // close shuts the process down
		}
		if s.ctx.Err() != nil {
			return // the process ended as close began: no restart
		}
		ee, ok := l.t.recvErr.(*ExitError)
		if !ok {
			// The server broke the stream (an oversize line, a read
			// error): a new process would not mend that.
			s.giveUp(l.t.recvErr)
			close(l.decided)
			close(l.nextCh)
			return
		}
		if l.t.useful.Load() || time.Since(l.t.started) >= usefulLife {
			b.Progress()
		}
		wait, ok := b.Next()
		s.mu.Lock()
		s.cur, s.needInit, s.lastExit = nil, true, ee
		s.mu.Unlock()
		if !ok {
			s.giveUp(s.exhausted(b, ee, nil))
			close(l.decided)
			close(l.nextCh)
			return
		}
		l.restart = true
		close(l.decided)
		s.log.Warn("stdio: server process died; restarting it",
			slog.Int("pid", ee.Pid), slog.String("status", ee.status()),
			slog.Int("attempt", b.Attempts()), slog.Duration("wait", wait))

		t, err := s.startAfter(b, wait, ee)
		if err != nil {
			if s.ctx.Err() == nil {
				s.giveUp(err)
			}
			close(l.nextCh)
			return
		}
		s.mu.Lock()
		if s.closed.Load() {
			// close came while the process was starting, and found none
			// to shut down: this one is ours to stop.
			s.mu.Unlock()
			_ = t.Close()
			close(l.nextCh)
			return
		}
		s.cur, s.last = t, t
		s.restarts++
		s.broadcast()
		s.mu.Unlock()
		s.log.Debug("stdio: server restarted", slog.Int("pid", t.pid), slog.Int("restarts", s.restartCount()))
		l.next = newLife(t)
		close(l.nextCh)
		l = l.next
	}
}

// startAfter waits, then starts the command again; a start that fails is
// a failed attempt too, retried as the policy says. It returns an error
// when close ends the wait or the policy gives up.
func (s *supervisor) startAfter(b *retry.Backoff, wait time.Duration, ee *ExitError) (*Transport, error) {
	for {
		if err := retry.Sleep(s.ctx, wait); err != nil {
			return nil, err
		}
		t, err := startProcess(s.cmd, s.sh)
		if err == nil {
			return t, nil
		}
		var ok bool
		if wait, ok = b.Next(); !ok {
			return nil, s.exhausted(b, ee, err)
		}
		s.log.Warn("stdio: restarting the server process failed; trying again",
			slog.String("error", err.Error()), slog.Int("attempt", b.Attempts()), slog.Duration("wait", wait))
	}
}

// exhausted builds the terminal error after b gave up.
func (s *supervisor) exhausted(b *retry.Backoff, ee *ExitError, startErr error) *RestartsExhaustedError {
	e := &RestartsExhaustedError{Attempts: b.Attempts() - 1, Restarts: s.restartCount(), Exit: ee, StartErr: startErr}
	s.log.Error("stdio: server process died; giving up restarting it",
		slog.Int("pid", ee.Pid), slog.String("status", ee.status()),
		slog.Int("attempts", e.Attempts), slog.Int("restarts", e.Restarts))
	return e
}

// giveUp ends the transport with err.
func (s *supervisor) giveUp(err error) {
	s.mu.Lock()
	s.cur, s.terminal = nil, err
	s.broadcast()
	s.mu.Unlock()
}

// recv is Transport.Recv under supervision.
func (s *supervisor) recv() (*jsonrpc.Message, error) {
	for {
		l := s.rl
		if s.lost {
			select {
			case <-l.nextCh:
			case <-s.ctx.Done():
			case <-s.sh.interrupt:
				return nil, jsonrpc.ErrInterrupted
			}
			if s.closed.Load() {
				return nil, jsonrpc.ErrClosed
			}
			if l.next == nil {
				return nil, s.terminalErr()
			}
			s.rl, s.lost = l.next, false
			continue
		}
		m, err := l.t.Recv()
		if s.closed.Load() {
			return nil, jsonrpc.ErrClosed
		}
		if err == nil || err == jsonrpc.ErrInterrupted {
			return m, err
		}
		// The process is over and its messages are delivered.
		select {
		case <-l.decided:
		case <-s.ctx.Done():
			return nil, jsonrpc.ErrClosed
		}
		if !l.restart {
			return nil, s.terminalErr()
		}
		s.lost = true
		ids, known := s.forget(l.t)
		return nil, &jsonrpc.SessionLostError{Cause: err, Unanswered: ids, UnansweredKnown: known}
	}
}

func (s *supervisor) terminalErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.terminal == nil {
		return jsonrpc.ErrClosed // not reached: run sets terminal before it stops
	}
	return s.terminal
}

// send is Transport.Send under supervision.
func (s *supervisor) send(ctx context.Context, m *jsonrpc.Message) error {
	if m == nil {
		return errNilMessage
	}
	isInit := m.IsRequest() && (m.Method == "initialize" || m.Method == "server/discover") // an opening request
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		s.mu.Lock()
		cur, needInit, lastExit, terminal, changed := s.cur, s.needInit, s.lastExit, s.terminal, s.changed
		s.mu.Unlock()
		switch {
		case s.closed.Load():
			return jsonrpc.ErrClosed
		case terminal != nil:
			return terminal
		case needInit && !isInit:
			return &restartingError{exit: lastExit}
		case cur == nil:
			// An opening request waits for the new process.
			select {
			case <-changed:
				continue
			case <-ctx.Done():
				return fmt.Errorf("stdio transport: waiting for the server process to restart: %w", ctx.Err())
			}
		}
		request := m.IsRequest()
		if request {
			s.written(cur, m.ID, isInit) // before it goes: its answer may come at once
		}
		err := cur.Send(ctx, m)
		if err != nil && request {
			// Not sent, or the caller gave up on it (a line handed off
			// to the background writer still goes; its answer is then
			// nobody's).
			s.answered(cur, m.ID)
		}
		if err == nil {
			if needInit {
				s.mu.Lock()
				if s.cur == cur {
					s.needInit = false
				}
				s.mu.Unlock()
			}
			return nil
		}
		return s.sendErr(err)
	}
}

// pendingIDs are the unanswered requests of one process; past
// maxPendingIDs (a server that answers nothing, for a long life) they are
// no longer kept, and its death reports none as known.
type pendingIDs struct {
	ids      map[string]jsonrpc.ID
	overflow bool
	// opening are the ids of the opening requests written to the
	// process, answered or not: a few (initialize, after a server/discover
	// probe), kept apart so that an overflow does not lose them.
	opening []string
}

const (
	maxPendingIDs = 4096
	maxOpening    = 8
)

// usefulLife is how long a process must live, if it sent nothing but the
// answers to its opening requests, for its death to count as progress
// (see run).
const usefulLife = 30 * time.Second

// written notes that request id goes to process t; opening tells whether
// it is an opening request.
func (s *supervisor) written(t *Transport, id jsonrpc.ID, opening bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unanswered == nil {
		s.unanswered = map[*Transport]*pendingIDs{}
	}
	p := s.unanswered[t]
	if p == nil {
		p = &pendingIDs{ids: map[string]jsonrpc.ID{}}
		s.unanswered[t] = p
	}
	if opening && len(p.opening) < maxOpening {
		p.opening = append(p.opening, id.Raw())
	}
	if p.overflow {
		return
	}
	if len(p.ids) >= maxPendingIDs {
		p.ids, p.overflow = nil, true
		return
	}
	p.ids[id.Raw()] = id
}

// answered notes that process t answered request id (or never got it),
// and reports whether id is one of its opening requests.
func (s *supervisor) answered(t *Transport, id jsonrpc.ID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.unanswered[t]
	if p == nil {
		return false
	}
	raw := id.Raw()
	delete(p.ids, raw)
	return slices.Contains(p.opening, raw)
}

// forget returns the requests process t left unanswered, and whether they
// are known, and forgets t.
func (s *supervisor) forget(t *Transport) ([]jsonrpc.ID, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.unanswered[t]
	delete(s.unanswered, t)
	if p == nil {
		return nil, true // nothing was sent to it
	}
	if p.overflow {
		return nil, false
	}
	ids := make([]jsonrpc.ID, 0, len(p.ids))
	for _, id := range p.ids {
		ids = append(ids, id)
	}
	return ids, true
}

// sendErr turns the error of a process transport's Send into the
// supervised transport's: the death of the process under a write means the
// session is gone, not the transport.
func (s *supervisor) sendErr(err error) error {
	var ee *ExitError
	switch {
	case s.closed.Load():
		return jsonrpc.ErrClosed
	case errors.As(err, &ee):
		s.mu.Lock()
		terminal := s.terminal
		s.mu.Unlock()
		if terminal != nil {
			return terminal
		}
		return &restartingError{exit: ee}
	}
	return err
}

// close is Transport.Close under supervision: supervision stops first, so
// that nothing is started any more, then the process in service is shut
// down as without supervision.
func (s *supervisor) close() error { return s.shutdown(context.Background()) }

// shutdown is close with the current process shut down within ctx.
func (s *supervisor) shutdown(ctx context.Context) error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed.Store(true)
		cur := s.cur
		s.broadcast()
		s.mu.Unlock()
		s.cancel()
		if cur != nil {
			s.closeErr = cur.Shutdown(ctx)
		}
		<-s.done
	})
	return s.closeErr
}

// restartingError is what Send returns for a message other than an opening
// request (initialize, or a stateless server's server/discover) while the
// server process is being restarted, or has been and awaits one. Nothing
// was written. It matches jsonrpc.ErrSessionExpired
// and jsonrpc.ErrNotSent, and unwraps to the *ExitError of the process
// that died.
type restartingError struct{ exit *ExitError }

func (e *restartingError) Error() string {
	msg := "stdio: session expired: the server process died and was restarted; it needs initialize (or server/discover) first"
	if e.exit != nil {
		msg += " (" + e.exit.Error() + ")"
	}
	return msg
}

func (e *restartingError) Is(target error) bool {
	return target == jsonrpc.ErrSessionExpired || target == jsonrpc.ErrNotSent
}

func (e *restartingError) Unwrap() error {
	if e.exit == nil {
		return nil
	}
	return e.exit
}

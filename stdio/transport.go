package stdio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/anymcp/anymcp/internal/wire"
	"github.com/anymcp/anymcp/jsonrpc"
)

const (
	// queueLen is how many decoded messages wait for Recv before the
	// stdout goroutine stops reading (and the server blocks on stdout).
	// The consumer (the client's read loop) never waits for the host's
	// handlers, so a short queue only has to smooth bursts.
	queueLen = 64
	// queueBytes bounds the stdout bytes that the messages waiting for
	// Recv hold: past it the stdout goroutine stops reading too. A line
	// bigger than that is still delivered, alone: Command.MaxLineSize
	// bounds it.
	queueBytes = 4 << 20
	// keepWriteBuf is the largest encoding buffer kept between Sends.
	keepWriteBuf = 1 << 20
)

// Transport is a running server process and the JSON-RPC stream over its
// stdin and stdout. It implements jsonrpc.Transport. Send may be called
// from many goroutines; Recv from one at a time; Close from any.
type Transport struct {
	cmd      *exec.Cmd
	pid      int
	log      *slog.Logger
	stdin    *os.File
	stdinRaw syscall.RawConn
	stdout   *os.File
	stderr   *os.File

	maxLine        int
	stdinCloseWait time.Duration
	termWait       time.Duration
	stderrCopy     io.Writer
	stderrLog      *slog.Logger

	// wlock is a one-slot semaphore that serializes writes to stdin; a
	// channel so that waiting for it can honour a context. It guards the
	// fields that follow.
	wlock    chan struct{}
	wbuf     []byte
	wp       []byte
	wn       int
	werr     error
	rawWrite func(fd uintptr) bool
	wgen     uint64     // bumped after a write that a context may interrupt
	dlMu     sync.Mutex // orders deadline changes against context callbacks

	msgs        chan queued   // decoded messages, for Recv
	queuedBytes atomic.Int64  // stdout bytes held by the lines in msgs
	room        chan struct{} // signalled (capacity 1) when Recv frees queued bytes

	closed    atomic.Bool // Close was called
	stopping  atomic.Bool // the shutdown has begun
	closeOnce sync.Once
	closeCh   chan struct{} // closed by Close
	hurryOnce sync.Once
	hurry     chan struct{} // closed when Shutdown's context is done: wait no more
	brokeOnce sync.Once
	brokeCh   chan struct{} // closed when a write to stdin fails

	// sh holds the wake-up of InterruptRecv and the take function of
	// TakeAnswers; a supervised Transport and its processes share one.
	sh *shared
	// sent counts the messages the stdout goroutine queued, received those
	// Recv returned; waitingAt is received when Recv began to wait for the
	// next one, -1 while it does not wait. waitingAt == sent means Recv
	// waits with every message taken: a response may then go to take.
	sent, received, waitingAt atomic.Int64

	exited chan struct{} // closed once the process is reaped
	state  *os.ProcessState

	stdoutDone chan struct{} // closed when the stdout goroutine ends
	readErr    error         // why stdout reading failed (nil at EOF)
	outSeq     atomic.Uint64
	started    time.Time   // when the process started
	useful     atomic.Bool // it sent a message other than an opening request's answer (see supervisor.run)

	stderrDone chan struct{} // closed when stderr is drained
	errSeq     atomic.Uint64
	tail       tailBuffer

	stopped  chan struct{} // closed once process and stderr are done
	cause    error         // why the transport stopped, for Send
	done     chan struct{} // closed when everything is over
	recvErr  error         // what Recv returns after the last message
	closeErr error         // what Close returns

	// sup, when set, makes this Transport the supervised front of a
	// series of process transports (see restart.go); every exported
	// method then defers to it and the fields above are unused.
	sup *supervisor
}

var _ jsonrpc.Transport = (*Transport)(nil)

// Start starts the server process described by cmd and returns the
// transport connected to it. It fails when the process cannot be started;
// a server that starts and then dies is reported by Recv, or restarted when
// cmd.Restart asks for supervision (see Command.Restart).
func Start(cmd Command) (*Transport, error) {
	if cmd.Restart != nil {
		return startSupervised(cmd)
	}
	return startProcess(cmd, newShared())
}

// shared is what a Recv waits on besides messages, and what it hands
// answers to: InterruptRecv's wake-up, held until a Recv uses it up, and
// TakeAnswers' take function. A supervised Transport and every process it
// starts share one, so they reach Recv wherever it waits.
type shared struct {
	interrupt chan struct{}
	take      wire.Taker
	// answered, set by a supervisor before its first process starts, is
	// told of every response a process writes, whether Recv or take gets
	// it (see supervisor.unanswered); it reports whether the response
	// answers an opening request.
	answered func(t *Transport, id jsonrpc.ID) (opening bool)
}

func newShared() *shared { return &shared{interrupt: make(chan struct{}, 1)} }

// startProcess starts one server process, sharing sh; its transport ends
// with it.
func startProcess(cmd Command, sh *shared) (*Transport, error) {
	if cmd.Path == "" {
		return nil, errors.New("stdio transport: Command.Path is empty")
	}
	c := exec.Command(cmd.Path, cmd.Args...)
	c.Dir = cmd.Dir
	c.Env = cmd.environ()
	c.SysProcAttr = procAttr(&cmd)

	var files []*os.File // every pipe end, closed on failure
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, fmt.Errorf("stdio transport: %w", err)
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("stdio transport: %w", err)
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("stdio transport: %w", err)
	}
	raw, err := inW.SyscallConn()
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("stdio transport: %w", err)
	}
	c.Stdin, c.Stdout, c.Stderr = inR, outW, errW
	if err := c.Start(); err != nil {
		closeAll()
		return nil, fmt.Errorf("stdio transport: starting server: %w", err)
	}
	// The child has its copies; the parent keeps only its own ends, so
	// that the server's exit is seen as EOF.
	inR.Close()
	outW.Close()
	errW.Close()

	log := cmd.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := &Transport{
		cmd:            c,
		pid:            c.Process.Pid,
		started:        time.Now(),
		log:            log,
		stdin:          inW,
		stdinRaw:       raw,
		stdout:         outR,
		stderr:         errR,
		maxLine:        cmd.maxLineSize(),
		stdinCloseWait: waitOrDefault(cmd.StdinCloseWait, defaultStdinCloseWait),
		termWait:       waitOrDefault(cmd.TermWait, defaultTermWait),
		stderrCopy:     cmd.Stderr,
		stderrLog:      cmd.StderrLogger,
		wlock:          make(chan struct{}, 1),
		msgs:           make(chan queued, queueLen),
		room:           make(chan struct{}, 1),
		closeCh:        make(chan struct{}),
		sh:             sh,
		hurry:          make(chan struct{}),
		brokeCh:        make(chan struct{}),
		exited:         make(chan struct{}),
		stdoutDone:     make(chan struct{}),
		stderrDone:     make(chan struct{}),
		stopped:        make(chan struct{}),
		done:           make(chan struct{}),
	}
	t.waitingAt.Store(-1)
	t.rawWrite = t.newRawWrite()
	log.Debug("stdio: server started", slog.String("path", c.Path), slog.Int("pid", t.pid))
	go t.wait()
	go t.readStdout()
	go t.drainStderr()
	go t.supervise()
	return t, nil
}

// Pid returns the server's process id, which is also its process group id.
// Under supervision it is the pid of the process started last: the
// current one, or the one that just died while the next is awaited.
func (t *Transport) Pid() int {
	if t.sup != nil {
		return t.sup.latest().pid
	}
	return t.pid
}

// StderrTail returns the last 4 KiB the server wrote to stderr so far.
// Under supervision it is the tail of the process Pid names.
func (t *Transport) StderrTail() string {
	if t.sup != nil {
		return t.sup.latest().tail.String()
	}
	return t.tail.String()
}

// Restarts returns how many times the supervised server process was
// started again after it died; without Command.Restart it is always 0.
func (t *Transport) Restarts() int {
	if t.sup != nil {
		return t.sup.restartCount()
	}
	return 0
}

// Send writes m to the server's stdin as one line. Concurrent calls are
// serialized; lines never interleave.
//
// If ctx is done before the line is written, Send returns ctx.Err() and
// nothing was sent. If ctx ends while a long line is half written (the
// server is not reading), the rest is written in the background so the
// stream stays well-formed, and Send returns an error matching both
// ctx.Err() and jsonrpc.ErrOutcomeUnknown.
//
// When the server is gone Send returns the reason: an *ExitError (or the
// *LineTooLongError that stopped it), or jsonrpc.ErrClosed after Close.
// Under supervision (Command.Restart) a dead server is not the end: Send
// returns an error matching jsonrpc.ErrSessionExpired (and unwrapping to
// the *ExitError) for anything but an initialize request until one has
// been written to the new process; an initialize request waits, within
// ctx, for the new process to start.
func (t *Transport) Send(ctx context.Context, m *jsonrpc.Message) error {
	if t.sup != nil {
		return t.sup.send(ctx, m)
	}
	if m == nil {
		return errNilMessage
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if t.closed.Load() {
		return jsonrpc.ErrClosed
	}
	select {
	case t.wlock <- struct{}{}:
	default:
		select {
		case t.wlock <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		case <-t.stopped:
			return t.stopErr()
		}
	}
	if err := ctx.Err(); err != nil {
		<-t.wlock
		return err
	}
	if t.stopping.Load() {
		<-t.wlock
		return t.waitStopped(ctx)
	}
	buf, err := jsonrpc.Append(t.wbuf[:0], m)
	if err != nil {
		<-t.wlock
		return fmt.Errorf("stdio transport: %w", err)
	}
	// Params and Result were checked to be valid JSON, where a raw newline
	// can only be whitespace between tokens: a space does as well and
	// keeps the message on one line.
	blankOut(buf, '\n')
	blankOut(buf, '\r')
	buf = append(buf, '\n')
	if cap(buf) <= keepWriteBuf {
		t.wbuf = buf
	} else {
		t.wbuf = nil
	}

	n, err := t.tryWrite(buf)
	if err == nil && n < len(buf) {
		var handedOff bool
		handedOff, err = t.writeSlow(ctx, buf, n)
		if handedOff {
			return err // the background writer releases the lock
		}
	}
	<-t.wlock
	if err == nil {
		return nil
	}
	if isCtxErr(err) {
		return err
	}
	t.log.Debug("stdio: write to server stdin failed", slog.String("error", err.Error()))
	t.brokeOnce.Do(func() { close(t.brokeCh) })
	return t.waitStopped(ctx)
}

// writeSlow writes the rest of buf, of which sent bytes are in the pipe
// already, waiting for the server to read. A done ctx interrupts the wait
// through a write deadline. When that leaves part of the line in the pipe,
// a background goroutine finishes the line and then releases the write
// lock; writeSlow then reports handedOff.
func (t *Transport) writeSlow(ctx context.Context, buf []byte, sent int) (handedOff bool, err error) {
	var stop func() bool
	if ctx.Done() != nil {
		gen := t.wgen
		stop = context.AfterFunc(ctx, func() {
			t.dlMu.Lock()
			if t.wgen == gen {
				_ = t.stdin.SetWriteDeadline(time.Unix(1, 0))
			}
			t.dlMu.Unlock()
		})
	}
	n, err := t.stdin.Write(buf[sent:])
	sent += n
	if stop != nil && !stop() {
		// The callback ran or is running: undo its deadline, and make it a
		// no-op should it still be on its way.
		t.dlMu.Lock()
		t.wgen++
		_ = t.stdin.SetWriteDeadline(time.Time{})
		t.dlMu.Unlock()
	}
	if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) || ctx.Err() == nil {
		return false, err
	}
	if sent == 0 {
		return false, ctx.Err()
	}
	rest := buf[sent:]
	go func() {
		if _, err := t.stdin.Write(rest); err != nil {
			t.brokeOnce.Do(func() { close(t.brokeCh) })
		}
		<-t.wlock
	}()
	return true, &sendCanceled{ctx.Err()}
}

// sendCanceled is a Send whose context ended with part of the line
// written: the server will get the whole message, too late for the caller.
type sendCanceled struct{ ctxErr error }

func (e *sendCanceled) Error() string {
	return "stdio transport: send interrupted with the message partly written (" + e.ctxErr.Error() + "); the server may still run it"
}

// Is makes the error match both the context's error and
// jsonrpc.ErrOutcomeUnknown.
func (e *sendCanceled) Is(target error) bool {
	return target == jsonrpc.ErrOutcomeUnknown || target == e.ctxErr
}

func isCtxErr(err error) bool {
	var sc *sendCanceled
	return err == context.Canceled || err == context.DeadlineExceeded || errors.As(err, &sc)
}

func blankOut(b []byte, c byte) {
	for {
		i := bytes.IndexByte(b, c)
		if i < 0 {
			return
		}
		b[i] = ' '
		b = b[i+1:]
	}
}

// waitStopped waits until the reason the transport stopped is known.
func (t *Transport) waitStopped(ctx context.Context) error {
	if t.closed.Load() {
		return jsonrpc.ErrClosed
	}
	select {
	case <-t.stopped:
		return t.stopErr()
	case <-ctx.Done():
		return fmt.Errorf("stdio transport: server is shutting down: %w", ctx.Err())
	}
}

// stopErr is what Send returns once the transport has stopped.
func (t *Transport) stopErr() error {
	if t.closed.Load() {
		return jsonrpc.ErrClosed
	}
	return t.cause
}

// Recv returns the next message from the server, in the order the server
// wrote them. When the server has exited, it returns, after the last
// message, an *ExitError (or the *LineTooLongError or read error that ended
// the transport). After Close it returns jsonrpc.ErrClosed.
//
// Under supervision (Command.Restart) the end of a process is reported as
// a *jsonrpc.SessionLostError whose Cause is its *ExitError, after the
// messages it wrote; Recv then goes on with the messages of the restarted
// process. When the policy gives up, Recv returns a
// *RestartsExhaustedError for good.
func (t *Transport) Recv() (*jsonrpc.Message, error) {
	if t.sup != nil {
		return t.sup.recv()
	}
	var q queued
	var ok bool
	select {
	case q, ok = <-t.msgs:
	default:
		t.waitingAt.Store(t.received.Load())
		var stop error
		select {
		case q, ok = <-t.msgs:
		case <-t.closeCh:
			stop = jsonrpc.ErrClosed
		case <-t.sh.interrupt:
			stop = jsonrpc.ErrInterrupted
		}
		t.waitingAt.Store(-1)
		if stop != nil {
			return nil, stop
		}
	}
	if ok {
		t.received.Add(1)
	}
	select {
	case <-t.sh.interrupt: // a message came first: the wake-up is used up
	default:
	}
	if t.closed.Load() {
		return nil, jsonrpc.ErrClosed
	}
	if !ok {
		return nil, t.recvErr
	}
	t.release(q.size)
	return q.m, nil
}

// TakeAnswers implements jsonrpc.AnswerTaker: a response that finds Recv
// waiting with every earlier message received goes to take, on the stdout
// goroutine.
func (t *Transport) TakeAnswers(take func(*jsonrpc.Message) bool) { t.sh.take.Set(take) }

// InterruptRecv wakes a Recv that waits, or the next one that would: it
// returns jsonrpc.ErrInterrupted, once (see jsonrpc.RecvInterrupter).
func (t *Transport) InterruptRecv() {
	select {
	case t.sh.interrupt <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// Close shuts the server down and releases everything: it closes the
// server's stdin, waits Command.StdinCloseWait for it to exit, then sends
// SIGTERM to its process group, waits Command.TermWait, and sends SIGKILL.
// Processes left in the group after the server exits get the same
// treatment. Close returns once the server is reaped and the transport's
// goroutines have ended. It may be called many times and concurrently;
// every call returns the same result.
//
// Close returns nil when the shutdown was clean: the server exited with
// status 0 after stdin closed, or ended on SIGTERM, or had already exited
// before Close. It returns an *ExitError when the server exited with
// another status, or had to be killed with SIGKILL.
//
// Under supervision Close first stops supervision: no process is started
// after it begins, a wait between restarts ends at once, and a process
// being started is shut down. The current process, if any, is then shut
// down as above, and Close reports on it.
func (t *Transport) Close() error {
	return t.Shutdown(context.Background())
}

// Shutdown is Close bounded by ctx: the same steps, but once ctx is done
// no wait goes on — the server's process group is sent SIGTERM and SIGKILL
// at once — and Shutdown returns as soon as the server is reaped and the
// transport's goroutines have ended. Under supervision, the current process
// is shut down so. A ctx done from the start skips the grace periods but
// still closes stdin first, so what was written reaches the server.
func (t *Transport) Shutdown(ctx context.Context) error {
	if t.sup != nil {
		return t.sup.shutdown(ctx)
	}
	stop := context.AfterFunc(ctx, func() { t.hurryOnce.Do(func() { close(t.hurry) }) })
	defer stop()
	t.closeOnce.Do(func() {
		t.closed.Store(true)
		close(t.closeCh)
	})
	<-t.done
	return t.closeErr
}

// wait is the goroutine that reaps the process.
func (t *Transport) wait() {
	_ = t.cmd.Wait() // the outcome is in ProcessState
	t.state = t.cmd.ProcessState
	close(t.exited)
}

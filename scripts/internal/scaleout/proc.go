package scaleout

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proc is a child process in a process group of its own, so that it is
// ended with every process it started. Its stderr goes to a log file in
// the run's directory, and is scanned for the line a bridge prints when
// it listens.
type Proc struct {
	Name string // its name in logs and errors
	Log  string // the path of its stderr log
	cmd  *exec.Cmd

	done     chan struct{} // closed when the process has exited
	mu       sync.Mutex
	err      error    // its exit, once done
	tail     []string // the last lines of its stderr
	listenCh chan string
}

// tailLines is how many lines of a child's stderr a failure quotes.
const tailLines = 12

var listeningRE = regexp.MustCompile(`listening on (http://127\.0\.0\.1:[0-9]+)/mcp`)

// Start runs argv as name, its stderr logged to dir/name.log, and
// records its pid in pidFile so that the shell script can end it even if
// this driver dies first.
func Start(name, dir, pidFile string, argv ...string) (*Proc, error) {
	logPath := dir + "/" + name + ".log"
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Stdin = nil
	cmd.Stdout = logf
	stderr, err := cmd.StderrPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	if err := appendPID(pidFile, cmd.Process.Pid); err != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		logf.Close()
		return nil, err
	}
	p := &Proc{Name: name, cmd: cmd, Log: logPath, done: make(chan struct{}), listenCh: make(chan string, 1)}
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		p.scan(io.TeeReader(stderr, logf))
	}()
	go func() {
		<-scanned // Wait closes the pipe: read it to its end first
		err := cmd.Wait()
		logf.Close()
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

// scan keeps the tail of r's lines and reports the first listening line.
func (p *Proc) scan(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for sc.Scan() {
		line := sc.Text()
		p.mu.Lock()
		if len(p.tail) == tailLines {
			p.tail = p.tail[1:]
		}
		p.tail = append(p.tail, line)
		p.mu.Unlock()
		if m := listeningRE.FindStringSubmatch(line); m != nil {
			select {
			case p.listenCh <- m[1]:
			default:
			}
		}
	}
	_, _ = io.Copy(io.Discard, r)
}

// StderrTail is the end of the process's stderr, for an error message.
func (p *Proc) StderrTail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.tail) == 0 {
		return "(no stderr)"
	}
	return strings.Join(p.tail, "\n    ")
}

// WaitListening waits until the process prints its listening line and
// returns the base URL there (http://127.0.0.1:PORT), or fails when the
// process exits or ctx ends first.
func (p *Proc) WaitListening(ctx context.Context) (string, error) {
	select {
	case u := <-p.listenCh:
		return u, nil
	case <-p.done:
		return "", fmt.Errorf("%s exited before it listened (%v); its stderr (%s):\n    %s", p.Name, p.ExitErr(), p.Log, p.StderrTail())
	case <-ctx.Done():
		return "", fmt.Errorf("%s printed no \"listening on http://127.0.0.1:PORT/mcp\" line in time; its stderr (%s):\n    %s", p.Name, p.Log, p.StderrTail())
	}
}

func (p *Proc) ExitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		return errors.New("exit status 0")
	}
	return p.err
}

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Kill ends the process group at once (SIGKILL), as a crash would, and
// waits for the process to be reaped.
func (p *Proc) Kill(ctx context.Context) error {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s (pid %d) still running after SIGKILL", p.Name, p.cmd.Process.Pid)
	}
}

// Stop ends the process group: SIGTERM, then SIGKILL after grace.
func (p *Proc) Stop(grace time.Duration) {
	if p.Exited() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) // grandchildren, if any
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = p.Kill(ctx)
}

func appendPID(path string, pid int) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(f, pid); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Exec0 runs argv to its end, bounded by ctx, and returns its failure with
// its output.
func Exec0(ctx context.Context, argv ...string) error {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(cctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

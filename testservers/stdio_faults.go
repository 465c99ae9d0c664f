package testservers

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
)

// StdioFaults are the failures of a stdio server, for the tests of a
// client's process supervision. All are off in the zero value. ServeStdio
// honours CrashOnCall and IgnoreStdinEOF; the others are about the
// process and only RunFromEnv honours them.
type StdioFaults struct {
	// CrashOnCall, when > 0, makes the server crash when its
	// CrashOnCall-th tools/call arrives (1: the first), before running
	// it: requests still running get no answer, nothing more is written
	// to stdout, and the process writes a line to stderr and exits with
	// CrashExitCode (in-process, ServeStdio returns ErrCrashed). A server
	// that must answer N calls first has CrashOnCall N+1.
	CrashOnCall int
	// CrashOnOpenFile, when set, is a file whose presence makes the server
	// crash when an opening request arrives (initialize, or
	// server/discover), removing the file first: of the processes a
	// supervisor starts one after another, the first to be opened while
	// the file exists dies before it answers, and the next does not.
	CrashOnOpenFile string
	// IgnoreStdinEOF keeps the server running after stdin closes: it
	// finishes its requests and waits to be killed (in-process, for ctx
	// to end), as a server that does not notice its client left.
	IgnoreStdinEOF bool
	// IgnoreSIGTERM makes the process ignore SIGTERM: only SIGKILL ends
	// it (once stdin closes, it exits, unless IgnoreStdinEOF).
	IgnoreSIGTERM bool
	// Grandchild makes the process start a second one, the same binary
	// in its "sleep" mode, in its process group, as npx or uvx do: it
	// holds the server's stderr open and lives until killed (or for
	// grandchildLife at most), ignoring SIGTERM too with IgnoreSIGTERM.
	// Only killing the whole group ends it.
	Grandchild bool
	// EscapedGrandchild makes the grandchild of Grandchild (it implies
	// it) leave the server's process group and session (setsid, on unix)
	// and hold the server's stdout as well as its stderr open, as a
	// daemonizing helper does: killing the server's group does not reach
	// it, and the pipes stay open after the server is gone.
	EscapedGrandchild bool
	// SessionOnFirstMessage makes the server behave as a stdio face over
	// another server does (supergateway --streamableHttp): the first
	// request, whatever its method, starts the session, initializing it
	// as for the server's first revision (Options.Versions[0]) unless it
	// is initialize, and is then served as usual (server/discover as a
	// initialize-era server serves it: -32601); a later initialize is refused,
	// -32600 "Invalid Request: Server already initialized". A client that
	// probes first must start the server again to initialize it.
	SessionOnFirstMessage bool
	// HoldFirstAnswer, with SessionOnFirstMessage, holds a first request
	// other than initialize until the next message arrives, and serves it
	// then, as supergateway answers the probe only once connected to its
	// upstream, after the client gave up waiting and sent initialize.
	HoldFirstAnswer bool
	// PIDLog, when set, is a file each process appends its pid to, a
	// line each: of the processes a client starts one after another, all
	// are listed.
	PIDLog string
	// PIDFile, when set, is a file the process writes its pid to, and
	// the grandchild's on a second line with Grandchild, once they run
	// (written whole, by a rename).
	PIDFile string
}

// CrashExitCode is the exit status of a stdio server that crashes as
// StdioFaults.CrashOnCall asks.
const CrashExitCode = 3

// ErrCrashed is matched by the error ServeStdio returns when it crashes as
// StdioFaults.CrashOnCall or CrashOnOpenFile asks.
var ErrCrashed = errors.New("test server: crashed on purpose")

// grandchildLife bounds the life of a grandchild nobody killed, so that
// a failing test leaves no process behind for long.
const grandchildLife = 2 * time.Minute

// crash counts the tools/call requests among the lines read and returns
// an error matching ErrCrashed, which says why, when this line is the one
// to crash on (CrashOnCall, or an opening request with CrashOnOpenFile).
func (s *Server) crash(line []byte, calls *int) error {
	n, file := s.opts.Stdio.CrashOnCall, s.opts.Stdio.CrashOnOpenFile
	if n <= 0 && file == "" {
		return nil
	}
	m, err := jsonrpc.DecodeMessage(line)
	if err != nil || !m.IsRequest() {
		return nil
	}
	if file != "" && (m.Method == "initialize" || m.Method == "server/discover") && os.Remove(file) == nil {
		s.fault(FaultCrash)
		return fmt.Errorf("%w on %s", ErrCrashed, m.Method)
	}
	if n <= 0 || m.Method != "tools/call" {
		return nil
	}
	*calls++
	if *calls < n {
		return nil
	}
	s.fault(FaultCrash)
	return fmt.Errorf("%w on tool call %d", ErrCrashed, *calls)
}

// startProcessFaults sets up the process-wide faults of f.
func startProcessFaults(f StdioFaults) error {
	if f.IgnoreSIGTERM {
		signal.Ignore(syscall.SIGTERM)
	}
	pids := fmt.Sprintln(os.Getpid())
	if f.Grandchild || f.EscapedGrandchild {
		pid, err := startGrandchild(f.EscapedGrandchild)
		if err != nil {
			return err
		}
		pids += fmt.Sprintln(pid)
	}
	if f.PIDLog != "" {
		if err := appendLine(f.PIDLog, fmt.Sprint(os.Getpid())); err != nil {
			return err
		}
	}
	if f.PIDFile == "" {
		return nil
	}
	tmp := filepath.Join(filepath.Dir(f.PIDFile), "."+filepath.Base(f.PIDFile)+".tmp")
	if err := os.WriteFile(tmp, []byte(pids), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, f.PIDFile)
}

// startGrandchild starts this binary in its sleep mode, in this
// process's group, with its stderr, and returns its pid. An escaped one
// runs in a session of its own and holds stdout too.
func startGrandchild(escaped bool) (int, error) {
	path, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(path)
	cmd.Env = append(os.Environ(), EnvVar+"=sleep")
	cmd.Stderr = os.Stderr
	if escaped {
		cmd.Stdout = os.Stdout
		cmd.SysProcAttr = newSession()
	}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting the grandchild: %w", err)
	}
	go func() { _ = cmd.Wait() }() // reaped if it dies first
	return cmd.Process.Pid, nil
}

// sleepUntilKilled is the grandchild's life: nothing, until a signal
// ends it, or grandchildLife.
func sleepUntilKilled() {
	if on, _ := strconv.ParseBool(os.Getenv(EnvIgnoreSIGTERM)); on {
		signal.Ignore(syscall.SIGTERM)
	}
	time.Sleep(grandchildLife)
}

// appendLine appends line and a newline to the file name, in one write.
func appendLine(name, line string) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line + "\n")
	return errors.Join(err, f.Close())
}

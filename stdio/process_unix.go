//go:build unix

package stdio

import (
	"os"
	"strconv"
	"syscall"
)

// procAttr puts the server in a process group of its own, whose id is the
// server's pid, so the transport can signal it and everything it spawned.
func procAttr(cmd *Command) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	if cmd.KillWithParent {
		setParentDeathSignal(a)
	}
	return a
}

// terminateGroup sends SIGTERM to the server's process group.
func terminateGroup(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGTERM) }

// killGroup sends SIGKILL to the server's process group.
func killGroup(p *os.Process) { _ = syscall.Kill(-p.Pid, syscall.SIGKILL) }

// tryWrite writes as much of t.wp as the pipe takes now, without waiting.
// It runs with the write lock held.
func (t *Transport) tryWrite(p []byte) (int, error) {
	t.wp = p
	err := t.stdinRaw.Write(t.rawWrite)
	n, werr := t.wn, t.werr
	t.wp, t.werr = nil, nil
	if err != nil {
		return 0, err
	}
	return n, werr
}

// newRawWrite returns the callback tryWrite hands to the pipe's RawConn.
// It is built once per transport so that a write allocates nothing.
func (t *Transport) newRawWrite() func(fd uintptr) bool {
	return func(fd uintptr) bool {
		for {
			n, err := syscall.Write(int(fd), t.wp)
			switch err {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				n, err = 0, nil
			}
			t.wn, t.werr = max(n, 0), err
			return true
		}
	}
}

// exitStatus returns the exit code and, when a signal ended the process,
// the signal's name.
func exitStatus(ps *os.ProcessState) (int, string) {
	if ps == nil {
		return -1, ""
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, signalName(ws.Signal())
	}
	return ps.ExitCode(), ""
}

var signalNames = map[syscall.Signal]string{
	syscall.SIGABRT: "SIGABRT",
	syscall.SIGALRM: "SIGALRM",
	syscall.SIGBUS:  "SIGBUS",
	syscall.SIGFPE:  "SIGFPE",
	syscall.SIGHUP:  "SIGHUP",
	syscall.SIGILL:  "SIGILL",
	syscall.SIGINT:  "SIGINT",
	syscall.SIGKILL: "SIGKILL",
	syscall.SIGPIPE: "SIGPIPE",
	syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGSEGV: "SIGSEGV",
	syscall.SIGTERM: "SIGTERM",
	syscall.SIGTRAP: "SIGTRAP",
	syscall.SIGUSR1: "SIGUSR1",
	syscall.SIGUSR2: "SIGUSR2",
}

func signalName(s syscall.Signal) string {
	if n, ok := signalNames[s]; ok {
		return n
	}
	return "signal " + strconv.Itoa(int(s))
}

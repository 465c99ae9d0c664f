package stdio

import (
	"errors"
	"strconv"
	"strings"
)

// ExitError reports the end of the server process. Recv returns it after
// the last message when the server exits or closes its stdout; Send returns
// it when the server is gone; Close returns it when the shutdown was not
// clean (see Transport.Close).
type ExitError struct {
	// Pid is the process id the server had.
	Pid int
	// ExitCode is the exit status, or -1 when a signal ended the process.
	ExitCode int
	// Signal names the signal that ended the process ("SIGTERM",
	// "SIGKILL", ...), or is empty when it exited by itself. When the
	// transport stopped the server (Close, a closed stdout, an oversize
	// line), this is the transport's own signal.
	Signal string
	// Stderr is the tail of what the server wrote to stderr, up to 4 KiB,
	// read to the end before the error was built.
	Stderr string
}

// Error says how the process ended and appends the stderr tail.
func (e *ExitError) Error() string {
	var b strings.Builder
	b.WriteString("server process ")
	b.WriteString(e.status())
	if tail := strings.TrimSpace(e.Stderr); tail != "" {
		b.WriteString("; stderr tail:\n")
		b.WriteString(tail)
	}
	return b.String()
}

// status says how the process ended: "exited with status 3", "killed by
// signal SIGKILL".
func (e *ExitError) status() string {
	if e.Signal != "" {
		return "killed by signal " + e.Signal
	}
	return "exited with status " + strconv.Itoa(e.ExitCode)
}

// RestartsExhaustedError ends a supervised transport (Command.Restart):
// the server process kept dying and the restart policy gave up. Recv and
// Send return it from then on. It unwraps to the last *ExitError and, when
// the last attempt could not even start the process, to that error too.
type RestartsExhaustedError struct {
	// Attempts is how many restarts were tried in a row without progress
	// before the policy gave up.
	Attempts int
	// Restarts is how many times the process was restarted in all.
	Restarts int
	// Exit is the last death of the process, with its stderr tail.
	Exit *ExitError
	// StartErr is why the last attempt failed to start the process, or
	// nil when the last attempt was the death in Exit.
	StartErr error
}

func (e *RestartsExhaustedError) Error() string {
	var b strings.Builder
	b.WriteString("stdio transport: server restarts exhausted: gave up after ")
	b.WriteString(strconv.Itoa(e.Attempts))
	b.WriteString(" restart attempts without progress (")
	b.WriteString(strconv.Itoa(e.Restarts))
	b.WriteString(" restarts in all)")
	if e.StartErr != nil {
		b.WriteString("; the last start failed: ")
		b.WriteString(e.StartErr.Error())
	}
	if e.Exit != nil {
		b.WriteString("; last death: ")
		b.WriteString(e.Exit.Error())
	}
	return b.String()
}

// Unwrap returns the last *ExitError and the start error, when set.
func (e *RestartsExhaustedError) Unwrap() []error {
	errs := make([]error, 0, 2)
	if e.Exit != nil {
		errs = append(errs, e.Exit)
	}
	if e.StartErr != nil {
		errs = append(errs, e.StartErr)
	}
	return errs
}

// LineTooLongError reports a stdout line longer than Command.MaxLineSize.
// It ends the transport: the server is stopped and Recv returns this error
// after the messages that came before the line.
type LineTooLongError struct {
	Limit int // the limit in bytes
}

func (e *LineTooLongError) Error() string {
	return "stdio transport: server wrote a stdout line longer than " + strconv.Itoa(e.Limit) + " bytes"
}

var errNilMessage = errors.New("stdio transport: Send of a nil message")

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
	if e.Signal != "" {
		b.WriteString("killed by signal ")
		b.WriteString(e.Signal)
	} else {
		b.WriteString("exited with status ")
		b.WriteString(strconv.Itoa(e.ExitCode))
	}
	if tail := strings.TrimSpace(e.Stderr); tail != "" {
		b.WriteString("; stderr tail:\n")
		b.WriteString(tail)
	}
	return b.String()
}

// LineTooLongError reports a stdout line longer than Command.MaxLineSize.
// It ends the transport: the server is stopped and Recv returns this error
// after the messages that came before the line.
type LineTooLongError struct {
	Limit int // the limit in bytes
}

func (e *LineTooLongError) Error() string {
	return "stdio: server wrote a stdout line longer than " + strconv.Itoa(e.Limit) + " bytes"
}

var errNilMessage = errors.New("stdio: Send of a nil message")

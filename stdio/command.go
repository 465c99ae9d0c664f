package stdio

import (
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/anymcp/anymcp/reconnect"
)

// DefaultMaxLineSize is the longest stdout line, in bytes and without its
// newline, that a Transport accepts when Command.MaxLineSize is zero.
const DefaultMaxLineSize = 64 << 20

const (
	defaultStdinCloseWait = 2 * time.Second
	defaultTermWait       = 2 * time.Second
)

// Command describes the server process to start. Only Path is required; the
// zero value of every other field is a sensible default.
type Command struct {
	// Path is the program to run. A name without a slash is looked up in
	// PATH, as exec.Command does.
	Path string
	// Args are the arguments, without the program name.
	Args []string
	// Dir is the working directory; empty means the current one.
	Dir string
	// Env holds "KEY=VALUE" entries added to the server's environment.
	// They override inherited variables of the same name.
	Env []string
	// InheritEnv starts the server's environment from the whole of
	// os.Environ() instead of the allowlist HOME, LOGNAME, PATH, SHELL,
	// TERM and USER. Leave it false unless the server needs more: the
	// environment often holds credentials meant for other programs.
	InheritEnv bool
	// KillWithParent, on Linux, has the kernel send the server SIGKILL
	// when the process that started it dies, even by SIGKILL, when
	// Close never runs. The server's own children are not signalled;
	// they see their stdin close. Elsewhere it has no effect.
	KillWithParent bool

	// Stderr, if set, receives a copy of every byte the server writes to
	// stderr. Writes happen on the transport's stderr goroutine; a writer
	// that blocks holds up the draining of stderr, and one that fails is
	// dropped. The transport never closes it.
	Stderr io.Writer
	// StderrLogger, if set, gets each stderr line as an Info record with
	// the line in the attribute "stderr" (lines are cut at 4 KiB).
	StderrLogger *slog.Logger
	// Logger receives the transport's own diagnostics: skipped stdout
	// lines, shutdown steps. Nil discards them.
	Logger *slog.Logger

	// MaxLineSize bounds one stdout line in bytes; 0 means
	// DefaultMaxLineSize (64 MiB). The transport never buffers more than
	// this per line.
	MaxLineSize int
	// StdinCloseWait is how long Close waits for the server to exit after
	// closing its stdin before it sends SIGTERM; 0 means 2s, a negative
	// value means no wait.
	StdinCloseWait time.Duration
	// TermWait is how long Close waits after SIGTERM before it sends
	// SIGKILL; 0 means 2s, a negative value means no wait.
	TermWait time.Duration

	// Restart, if set, has the transport supervise the server: when the
	// process dies by itself (it exits, a signal ends it, or it closes
	// its stdout) the transport starts the same command again, waiting
	// between attempts as the policy says. Nil, the default, means no
	// supervision: the end of the process ends the transport.
	//
	// Under supervision, a death shows in Recv, after the messages the
	// dead process wrote, as a *jsonrpc.SessionLostError whose Cause is
	// the *ExitError. From the death until an initialize request has been
	// written to the new process, Send refuses every other message with
	// an error matching jsonrpc.ErrSessionExpired and jsonrpc.ErrNotSent
	// (nothing is written),
	// and an initialize request waits, within its context, for the new
	// process to be up. A process that got somewhere counts as progress,
	// and the policy's run of failed attempts starts over when it dies:
	// one that sent a message other than the answer to an opening request
	// (initialize, server/discover), or lived 30 seconds. A server that
	// answers the handshake and then dies every time is given up on when
	// the policy's attempts run out. When the
	// policy gives up, Recv and Send return a *RestartsExhaustedError
	// that wraps the last *ExitError, and the transport is over; Recv
	// reports that last death as this error alone, not as a lost session
	// first. A process that cannot be started counts as a failed attempt
	// too; only the first start, in Start, is not retried. A server
	// that breaks the stream (a line over MaxLineSize, a read error) is
	// not restarted: that error ends the transport as without Restart.
	// Each restart is logged to Logger as a Warn record.
	Restart *reconnect.Policy
}

// baseEnvKeys are the variables a server gets when InheritEnv is false:
// enough to find programs, a home directory and a terminal type, and
// nothing that is likely to be a secret.
var baseEnvKeys = [...]string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"}

// environ returns the server's environment. Command.Env comes last, and
// os/exec keeps only the last value of a repeated key, so it overrides.
func (c *Command) environ() []string {
	var env []string
	if c.InheritEnv {
		env = os.Environ()
	} else {
		env = make([]string, 0, len(baseEnvKeys)+len(c.Env))
		for _, k := range baseEnvKeys {
			if v, ok := os.LookupEnv(k); ok {
				env = append(env, k+"="+v)
			}
		}
	}
	return append(env, c.Env...)
}

func (c *Command) maxLineSize() int {
	if c.MaxLineSize <= 0 {
		return DefaultMaxLineSize
	}
	return c.MaxLineSize
}

func waitOrDefault(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

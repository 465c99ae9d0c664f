// Package stdio is the stdio transport of anymcp: it runs an MCP server as a
// child process and exchanges newline-delimited JSON-RPC messages with it
// over the process's stdin and stdout.
//
// Start launches the process and returns a *Transport, which implements
// jsonrpc.Transport. The transport supervises the process for its whole
// life:
//
//   - The server runs in its own process group, so that the helpers it
//     spawns (npx, uvx and shells start grandchildren) are stopped with it.
//   - By default the server sees only a small allowlist of environment
//     variables (HOME, LOGNAME, PATH, SHELL, TERM, USER) plus Command.Env;
//     Command.InheritEnv passes the whole environment.
//   - stdout is read line by line. Each line is decoded once; a batch (a JSON
//     array) becomes separate messages; lines that are not JSON-RPC (start-up
//     banners, stray prints) are logged and skipped. A line longer than
//     Command.MaxLineSize ends the transport with a *LineTooLongError.
//     At most 64 messages and 4 MiB of lines (one longer line alone) wait
//     for Recv: past that, stdout is not read until Recv catches up, and
//     the server blocks on its writes. Nothing is dropped.
//   - stderr is always drained, so a chatty server never blocks on it. Its
//     last 4 KiB are kept for StderrTail and for the *ExitError that reports
//     the end of the process; it can also be copied to a writer or logged
//     line by line.
//   - Close shuts the server down the way the MCP specification asks:
//     close stdin, wait, SIGTERM the process group, wait, SIGKILL the group.
//     It returns once the process is reaped and every goroutine of the
//     transport has ended.
//
// The limit of that cleanup: a process that leaves the server's process
// group (setsid, setpgid, a daemonizing double fork) is out of reach of the
// group's signals, and may outlive Close. When such a process holds the
// server's stdout or stderr open, Close does not wait for those pipes to
// end: once the server and its group are gone, a read that makes no
// progress for 250–500 ms is cut short (and a warning logged), so Close still
// returns. The transport does not make the host a child subreaper
// (PR_SET_CHILD_SUBREAPER) to catch such processes: that is an attribute of
// the whole host process, which would inherit every orphan of every child
// it runs and have to reap them, racing os/exec's Wait for its other
// children; and a cgroup needs a delegated cgroup tree that a library
// cannot count on. Run servers that daemonize under a supervisor that
// contains them (systemd-run --scope, a container) when that matters.
//
// When the server exits on its own, Recv first returns every message the
// server wrote and then an *ExitError with the exit status and the tail of
// stderr. After Close, Recv and Send return an error that matches
// jsonrpc.ErrClosed.
//
// Supervision is optional: with Command.Restart set, a server that dies is
// started again under that reconnect.Policy. Recv then reports the death as
// a *jsonrpc.SessionLostError (its Cause the *ExitError) and goes on with
// the new process; Send refuses all but initialize, with an error matching
// jsonrpc.ErrSessionExpired and jsonrpc.ErrNotSent, until the client has
// initialized the new
// process. When the policy gives up, the transport ends with a
// *RestartsExhaustedError. Close stops supervision before it shuts the
// current process down.
package stdio

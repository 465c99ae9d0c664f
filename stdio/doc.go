// Package stdio is the stdio transport of anymcp: it runs an MCP server as a
// child process and exchanges newline-delimited JSON-RPC messages with it
// over the process's stdin and stdout.
//
// Most hosts use client.Dial with client.Command. To run the protocol over
// a transport built by hand:
//
//	t, err := stdio.Start(stdio.Command{Path: "npx", Args: []string{"-y", "@modelcontextprotocol/server-everything"}})
//	if err != nil { ... }
//	conn, err := client.Open(ctx, t)
//
// The transport supervises the process for its whole life:
//
//   - the server runs in its own process group, so the helpers it spawns
//     (npx, uvx and shells start grandchildren) stop with it;
//   - it sees only HOME, LOGNAME, PATH, SHELL, TERM, USER and Command.Env,
//     unless Command.InheritEnv;
//   - stdout lines wait for Recv in a bounded queue (past it the server
//     blocks on its writes; nothing is dropped); a line longer than
//     Command.MaxLineSize ends the transport with a *LineTooLongError;
//   - stderr is always drained; its tail is in StderrTail and in the
//     *ExitError that reports the end of the process;
//   - Close closes stdin, then SIGTERMs and SIGKILLs the group, and returns
//     once the process is reaped and every goroutine has ended.
//
// A process that leaves the group (setsid, a daemonizing double fork) may
// outlive Close; Close still returns. Run such servers under a supervisor
// that contains them (systemd-run --scope, a container).
//
// With Command.Restart set, a server that dies is started again under that
// reconnect.Policy: Recv reports a *jsonrpc.SessionLostError and Send
// refuses all but initialize until the client has initialized the new
// process; when the policy gives up, the transport ends with a
// *RestartsExhaustedError.
//
// The details, and why the library does not make the host a subreaper, are
// in docs/transports.md and docs/security.md in the repository.
package stdio

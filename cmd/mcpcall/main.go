// Command mcpcall talks to any MCP server from the shell: a Streamable HTTP
// or HTTP+SSE URL, a local command over stdio, or a server named in the MCP
// config files people already have (Claude Desktop, Claude Code, VS Code,
// Cursor).
//
//	mcpcall tools list http://127.0.0.1:8080/mcp
//	mcpcall tools call echo text=hi -- npx -y @modelcontextprotocol/server-everything
//	mcpcall tools call add a=1 b=2 --json myserver | jq .structuredContent
//	mcpcall probe -v https://example.com/mcp
//	mcpcall demo
//
// The target always comes last, so scripts can append it. Exit codes: 0 ok,
// 1 the tool answered isError, 2 usage, 3 auth (401/403), 4 connection or
// transport, 5 JSON-RPC error, 6 timeout, 130 interrupted.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// A hangup (the terminal closed, the SSH connection dropped) ends the
	// run as Ctrl-C does: left to its default, it killed mcpcall at once,
	// and a stdio server, in a process group of its own, ran on. Unless
	// hangups are ignored (nohup): then the run goes on, as asked.
	signals := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		signals = append(signals, syscall.SIGHUP)
	}
	ctx, stop := signal.NotifyContext(context.Background(), signals...)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

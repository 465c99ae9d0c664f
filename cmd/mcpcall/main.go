// Command mcpcall talks to any MCP server from the shell: a Streamable HTTP
// URL or a local command over stdio.
//
//	mcpcall tools list http://127.0.0.1:8080/mcp
//	mcpcall tools call echo --args '{"text":"hi"}' -- npx -y @modelcontextprotocol/server-everything
//	mcpcall demo
//
// The target always comes last, so scripts can append it.
package main

import (
	"os"

	"github.com/anymcp/anymcp/testservers"
)

func main() {
	testservers.RunFromEnv() // `mcpcall demo` starts itself as its stdio test server
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

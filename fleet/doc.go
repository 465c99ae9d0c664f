// Package fleet is many MCP servers behind one catalogue, for a host (an
// agent, an IDE back end, a chat app) that gives their tools to an LLM.
//
// A Fleet is made of Servers: a name, a client.Target and the server's
// own client options. Nothing is dialled by New; a server is dialled on
// first use (its catalogue, or a call), or all of them at once with
// WithEager, each within its own connect timeout; at most WithMaxSpawns
// commands and WithMaxDials URLs start at a time, and a server that does
// not answer gives its slot back after WithStartupGrace.
// A dead, refused or hanging server costs the others nothing beyond its
// own timeout: its failure is recorded, typed (ServerError.Kind), and it
// is tried again on a later use only after a backoff. Every server keeps
// its own Conn, so its era, transport, authorization and reconnect policy
// are its own.
//
//	f, err := fleet.New([]fleet.Server{
//		{Name: "files", Target: client.Command("mcp-files", "/srv")},
//		{Name: "search", Target: client.URL("https://search.example/mcp")},
//	})
//	defer f.Close()
//	cat, err := f.Tools(ctx)      // every tool, under its fleet name
//	best, err := f.SearchTools(ctx, "read a file", 5)
//	res, err := f.CallTool(ctx, best[0].Name, args)
//
// Fleet names (files__read_file) match ^[A-Za-z0-9_-]{1,64}$, as LLM APIs
// require, are unique, and are the same on every run for the same
// configuration; Lookup maps one back to its server and tool. A tool keeps
// its own name and schemas byte for byte in Tool.Tool.
//
// The catalogue is cached per server: an initialize-era server is listed
// again when it says its list changed, or re-initialized or restarted; a
// stateless one as its listing's ttlMs says. SearchTools ranks the
// catalogue for a query (BM25 over names, titles and descriptions).
//
// WithPins holds each tool to the definition first seen or approved
// (package pin): a tool that changed is left out and not called.
//
// Status and OnStateChange tell each server's state. A stdio server idle
// for WithIdleStop is stopped and started again on next use; Close leaves
// no process and no goroutine behind.
//
// The guide, with the naming rules, the lifecycle and the measurements
// behind the search ranking, is docs/fleet.md in the repository.
package fleet

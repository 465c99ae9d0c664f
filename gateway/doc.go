// Package gateway serves a whole fleet of MCP servers, of every era and
// transport, as one MCP server to clients of every era.
//
// The upstream side is package fleet: each server dialled on first use,
// under its fleet name. The downstream side is package bridge: the
// 2026-07-28 stateless face, 2025 sessions with resumption, /sse, and
// stdio. Between them the gateway routes each request to the one server
// it names, and merges the lists.
//
// A View is a named subset of the fleet, with its own renames,
// descriptions and tool limit; Approvals gate risky tools; Pins hold back
// a tool whose definition changed; Access admits HTTP clients and picks
// a token's view. The guide is docs/gateway.md in the repository;
// mcpcall bridge --all is its command.
package gateway

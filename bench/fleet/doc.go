// Command fleetbench lists a fleet of MCP servers from cold, with anymcp's
// package fleet and with mcporter, in interleaved rounds. It prints the table
// of docs/fleet-benchmarks.md. run.sh builds it and says how to run it.
//
// The same binary is the fleet's servers: a stdio test server, or one that
// never answers.
package main

// Package gateway benchmarks package gateway side by side with mcporter
// serve (npm mcporter, --http) over the same fleet: one call direct,
// through the gateway and through mcporter at 64 concurrent clients (cost
// per call, p50, p99), the memory of idle downstream sessions, and a fleet
// of 1,000 configured HTTP servers listed from cold; and the gateway's own
// allocations per call above a bridge (BenchmarkGatewayOwnCost, one
// client, in process). run.sh runs them and
// prints the table of docs/gateway-benchmarks.md. Benchmarks only: go test
// without -bench runs nothing here. BenchmarkSessions and BenchmarkFleet1000
// measure once per iteration: run them with -benchtime 1x. The binary
// fails when a process it started is left running.
package gateway

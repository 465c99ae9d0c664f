package scaleout

import (
	"fmt"
	"strings"
)

// ReplicaHeader is the response header HAProxy adds to name the bridge
// replica that answered: the driver learns from it where each leg of an
// input_required round landed.
const ReplicaHeader = "X-Bridge-Replica"

// HAProxyConfig is an HAProxy configuration that spreads the requests
// arriving at listen (host:port) round-robin over the bridges at
// backends (host:port each, named b0, b1, ...). Each HTTP request is
// balanced on its own. A request is sent again, to another bridge, only
// when the connection to the first failed before the request went out
// (retry-on conn-failure, HAProxy's default): never once a bridge may
// have read it. A bridge that stops accepting connections is taken out
// within a few hundred milliseconds by the TCP check. A session of the
// initialize era sticks to the bridge that opened it (its Mcp-Session-Id,
// learnt from the answer to initialize), and an HTTP+SSE client to one
// bridge by its address: docs/bridge-deploy.md's configuration.
func HAProxyConfig(listen string, backends []string) string {
	var b strings.Builder
	b.WriteString(`global
    maxconn 512

defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    timeout http-request 10s
    retries 3
    retry-on conn-failure
    option redispatch 1

frontend mcp
`)
	fmt.Fprintf(&b, "    bind %s\n", listen)
	b.WriteString(`    acl legacy path_beg /sse /message
    use_backend bridges_sse if legacy
    default_backend bridges

backend bridges
    balance roundrobin
    stick-table type string len 128 size 10k expire 30m
    stick on req.hdr(Mcp-Session-Id)
    stick store-response res.hdr(Mcp-Session-Id)
`)
	servers(&b, backends)
	b.WriteString(`
backend bridges_sse
    balance source
`)
	servers(&b, backends)
	return b.String()
}

func servers(b *strings.Builder, backends []string) {
	b.WriteString("    default-server check inter 100ms fall 1 rise 2\n")
	fmt.Fprintf(b, "    http-response set-header %s %%[srv_name]\n", ReplicaHeader)
	for i, addr := range backends {
		fmt.Fprintf(b, "    server %s %s\n", ReplicaName(i), addr)
	}
}

// ReplicaName is the name of the i-th bridge in the HAProxy configuration
// and in the driver's report.
func ReplicaName(i int) string { return fmt.Sprintf("b%d", i) }

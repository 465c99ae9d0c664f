package negotiate

import (
	"fmt"
	"strings"
	"time"
)

// EraPolicy says which protocol eras the ladder tries.
type EraPolicy int

const (
	// EraAuto tries the stateless request first, then the initialize handshake
	// (the specification's rule for dual-era clients).
	EraAuto EraPolicy = iota
	// StatelessOnly speaks only the stateless revisions: no initialize.
	StatelessOnly
	// InitializeOnly speaks only the initialize-based revisions: no probe.
	InitializeOnly
)

var eraPolicyNames = []string{"auto", "stateless", "initialize"}

func (p EraPolicy) String() string {
	if int(p) >= 0 && int(p) < len(eraPolicyNames) {
		return eraPolicyNames[p]
	}
	return fmt.Sprintf("EraPolicy(%d)", int(p))
}

// eraPolicyAliases are the names the eras had before they got words of
// their own ("modern" and "legacy" now name only the transports).
var eraPolicyAliases = map[string]EraPolicy{"modern": StatelessOnly, "legacy": InitializeOnly}

// ParseEraPolicy reads "auto", "stateless" or "initialize", and the old
// names "modern" (stateless) and "legacy" (initialize).
func ParseEraPolicy(s string) (EraPolicy, error) {
	for i, n := range eraPolicyNames {
		if n == s {
			return EraPolicy(i), nil
		}
	}
	if p, ok := eraPolicyAliases[s]; ok {
		return p, nil
	}
	return EraAuto, fmt.Errorf("unknown protocol era %q (want one of %s)", s, strings.Join(eraPolicyNames, ", "))
}

// DefaultProbeTimeout bounds the wait for an answer to the stateless probe on
// a transport that has no HTTP status to go by (stdio, a custom one): a
// initialize-era server may ignore a request that comes before initialize, and
// silence is its answer.
const DefaultProbeTimeout = time.Second

// Request names in reports.
const (
	RequestDiscover   = "server/discover"
	RequestInitialize = "initialize"
)

// TransportPolicy says which HTTP transports the ladder may try, and in
// what order. Its companion EraPolicy says which protocol eras.
type TransportPolicy int

const (
	// TransportAuto tries Streamable HTTP, then HTTP+SSE on 400/404/405 (the default).
	TransportAuto TransportPolicy = iota
	// StreamableOnly tries Streamable HTTP only.
	StreamableOnly
	// SSEOnly tries HTTP+SSE only.
	SSEOnly
	// SSEFirst tries HTTP+SSE, then Streamable HTTP when the GET is refused.
	SSEFirst
)

var transportPolicyNames = []string{"auto", "streamable-only", "sse-only", "sse-first"}

func (p TransportPolicy) String() string {
	if int(p) < len(transportPolicyNames) {
		return transportPolicyNames[p]
	}
	return fmt.Sprintf("TransportPolicy(%d)", int(p))
}

// ParseTransportPolicy reads a policy name as String writes it.
func ParseTransportPolicy(s string) (TransportPolicy, error) {
	for i, n := range transportPolicyNames {
		if n == s {
			return TransportPolicy(i), nil
		}
	}
	return TransportAuto, fmt.Errorf("unknown transport policy %q (want one of %s)", s, strings.Join(transportPolicyNames, ", "))
}

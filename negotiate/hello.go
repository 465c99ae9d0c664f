package negotiate

import (
	"fmt"
	"strings"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
)

// Hello holds the requests that open a conversation in each era; the
// protocol layer builds them (they carry its client info and capabilities),
// the ladder sends them. Either may be nil to leave its era out.
type Hello struct {
	// Discover returns the modern probe for revision version: a
	// server/discover request whose _meta carries that revision, the
	// client's info and its capabilities. The ladder gives it its id.
	Discover func(version string) *jsonrpc.Message
	// Initialize is the legacy handshake's initialize request. The ladder
	// gives it its id.
	Initialize *jsonrpc.Message
}

// EraPolicy says which protocol eras the ladder tries.
type EraPolicy int

const (
	// EraAuto tries the modern request first, then the legacy handshake
	// (the specification's rule for dual-era clients).
	EraAuto EraPolicy = iota
	// ModernOnly speaks only the modern revisions: no initialize.
	ModernOnly
	// LegacyOnly speaks only the initialize-based revisions: no probe.
	LegacyOnly
)

var eraPolicyNames = []string{"auto", "modern", "legacy"}

func (p EraPolicy) String() string {
	if int(p) >= 0 && int(p) < len(eraPolicyNames) {
		return eraPolicyNames[p]
	}
	return fmt.Sprintf("EraPolicy(%d)", int(p))
}

// ParseEraPolicy reads "auto", "modern" or "legacy".
func ParseEraPolicy(s string) (EraPolicy, error) {
	for i, n := range eraPolicyNames {
		if n == s {
			return EraPolicy(i), nil
		}
	}
	return EraAuto, fmt.Errorf("negotiate: unknown era %q (want one of %s)", s, strings.Join(eraPolicyNames, ", "))
}

// DefaultProbeTimeout bounds the wait for an answer to the modern probe on
// a transport that has no HTTP status to go by (stdio, a custom one): a
// legacy server may ignore a request that comes before initialize, and
// silence is its answer.
const DefaultProbeTimeout = time.Second

// Request names in reports.
const (
	RequestDiscover   = "server/discover"
	RequestInitialize = "initialize"
)

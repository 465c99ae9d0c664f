package mcp

// Protocol revisions.
const (
	Version20241105 = "2024-11-05"
	Version20250326 = "2025-03-26"
	Version20250618 = "2025-06-18"
	Version20251125 = "2025-11-25"
	Version20260728 = "2026-07-28"

	// LatestInitializeVersion is the newest initialize-era revision: the
	// one offered in initialize.
	LatestInitializeVersion = Version20251125
	// LatestStatelessVersion is the newest stateless revision: the one stateless
	// requests carry first.
	LatestStatelessVersion = Version20260728
)

// InitializeVersions are the initialize-era revisions, newest first: those a server
// may answer initialize with.
var InitializeVersions = []string{Version20251125, Version20250618, Version20250326, Version20241105}

// StatelessVersions are the stateless revisions this module speaks, newest first:
// those a request may carry in _meta.
var StatelessVersions = []string{Version20260728}

// IsInitializeVersion reports whether v is one of InitializeVersions (an
// initialize-era revision an initialize answer may name).
func IsInitializeVersion(v string) bool {
	for _, s := range InitializeVersions {
		if s == v {
			return true
		}
	}
	return false
}

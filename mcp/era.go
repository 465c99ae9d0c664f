package mcp

import "slices"

// Era is how a revision opens a conversation. Initialize-era revisions (2024-11-05
// to 2025-11-25) start with the initialize handshake and keep a session;
// stateless ones (2026-07-28 and later) keep no session: every request carries
// its revision, the client's identity and its capabilities in _meta.
type Era string

// The eras.
const (
	EraInitialize Era = "initialize"
	EraStateless  Era = "stateless"
)

// EraOf returns the era of revision v, or "" for a revision this module
// does not know.
func EraOf(v string) Era {
	switch {
	case slices.Contains(StatelessVersions, v):
		return EraStateless
	case slices.Contains(InitializeVersions, v):
		return EraInitialize
	}
	return ""
}

// BestVersion returns the newest revision of era e that both sides speak,
// given the list a server advertised, or "" when there is none.
func BestVersion(e Era, advertised []string) string {
	ours := InitializeVersions
	if e == EraStateless {
		ours = StatelessVersions
	}
	for _, v := range ours { // newest first
		if slices.Contains(advertised, v) {
			return v
		}
	}
	return ""
}

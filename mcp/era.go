package mcp

import "slices"

// Era is how a revision opens a conversation. Legacy revisions (2024-11-05
// to 2025-11-25) start with the initialize handshake and keep a session;
// modern ones (2026-07-28 and later) are stateless: every request carries
// its revision, the client's identity and its capabilities in _meta.
type Era string

// The eras.
const (
	EraLegacy Era = "legacy"
	EraModern Era = "modern"
)

// EraOf returns the era of revision v, or "" for a revision this module
// does not know.
func EraOf(v string) Era {
	switch {
	case slices.Contains(ModernVersions, v):
		return EraModern
	case slices.Contains(SupportedVersions, v):
		return EraLegacy
	}
	return ""
}

// BestVersion returns the newest revision of era e that both sides speak,
// given the list a server advertised, or "" when there is none.
func BestVersion(e Era, advertised []string) string {
	ours := SupportedVersions
	if e == EraModern {
		ours = ModernVersions
	}
	for _, v := range ours { // newest first
		if slices.Contains(advertised, v) {
			return v
		}
	}
	return ""
}

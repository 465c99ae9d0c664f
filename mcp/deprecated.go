package mcp

// The era names before the eras got words of their own ("modern" and
// "legacy" are the names of the Streamable HTTP and HTTP+SSE transports).
// Kept for one release; see docs/migration.md.
const (
	// Deprecated: use EraStateless.
	EraModern = EraStateless
	// Deprecated: use EraInitialize.
	EraLegacy = EraInitialize
	// Deprecated: use LatestStatelessVersion.
	LatestModernVersion = LatestStatelessVersion
)

// Deprecated: use StatelessVersions.
var ModernVersions = StatelessVersions

package negotiate

// The policy names before the eras got words of their own. Kept for one
// release; see docs/migration.md.
const (
	// Deprecated: use StatelessOnly.
	ModernOnly = StatelessOnly
	// Deprecated: use InitializeOnly.
	LegacyOnly = InitializeOnly
	// Deprecated: use TransportAuto.
	Auto = TransportAuto
)

//go:build race

package gateway

// raceEnabled reports whether the race detector is on: it changes how
// much the runtime allocates, which the allocation budgets allow for.
const raceEnabled = true

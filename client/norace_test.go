//go:build !race

package client

// raceEnabled reports whether the race detector is on: it multiplies
// memory and slows everything, which the flood tests allow for.
const raceEnabled = false

package ladder

import "time"

// SetCachedEndpointWait sets cachedEndpointWait for a test, until it ends.
func SetCachedEndpointWait(cleanup func(func()), d time.Duration) {
	old := cachedEndpointWait
	cachedEndpointWait = d
	cleanup(func() { cachedEndpointWait = old })
}

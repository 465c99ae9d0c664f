package modern

// WaitDrains waits until the answered POST streams read in the background
// are closed (and their connections back in the pool).
func (t *Transport) WaitDrains() { t.drains.Wait() }

package client

import (
	"slices"
	"sync"
)

// taskWakes are the calls waiting for a task to end, by its id: each has
// a wake channel (buffered, one slot) that a status notification of the
// task fills, so that it polls at once. A wait removes its channel when it
// ends, so the table holds no more than the waits in progress.
// Its lock is a leaf: nothing else is locked while it is held.
type taskWakes struct {
	mu   sync.Mutex
	byID map[string][]chan struct{}
}

// watch enters ch as the wake channel of a wait for task id.
func (w *taskWakes) watch(id string, ch chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.byID == nil {
		w.byID = make(map[string][]chan struct{})
	}
	w.byID[id] = append(w.byID[id], ch)
}

// unwatch forgets the wake channel ch of a wait for task id.
func (w *taskWakes) unwatch(id string, ch chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ws := slices.DeleteFunc(w.byID[id], func(c chan struct{}) bool { return c == ch })
	if len(ws) == 0 {
		delete(w.byID, id)
	} else {
		w.byID[id] = ws
	}
}

// wake wakes every wait for task id that is not woken already.
func (w *taskWakes) wake(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ch := range w.byID[id] {
		select {
		case ch <- struct{}{}:
		default: // woken already
		}
	}
}

package stdio

// Queued returns how many messages of t's current process wait for Recv.
func Queued(t *Transport) int {
	if t.sup != nil {
		t = t.sup.latest()
	}
	return len(t.msgs)
}

// RecvWaits reports whether a Recv of t's current process waits with every
// message queued so far received: a response would go to TakeAnswers' take.
func RecvWaits(t *Transport) bool {
	if t.sup != nil {
		t = t.sup.latest()
	}
	return t.waitingAt.Load() == t.sent.Load()
}

// Unanswered returns how many requests written to the current process of
// the supervised t it counts as unanswered.
func Unanswered(t *Transport) int {
	s := t.sup
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.unanswered[s.cur]; p != nil {
		return len(p.ids)
	}
	return 0
}

// Exited returns a channel closed once t's current process is reaped.
func Exited(t *Transport) <-chan struct{} {
	if t.sup != nil {
		t = t.sup.latest()
	}
	return t.exited
}

// SupervisorDone returns a channel closed once the supervisor of t has
// stopped: no process starts after it is closed.
func SupervisorDone(t *Transport) <-chan struct{} { return t.sup.done }

package stdio

// Queued returns how many messages of t's current process wait for Recv.
func Queued(t *Transport) int {
	if t.sup != nil {
		t = t.sup.latest()
	}
	return len(t.msgs)
}

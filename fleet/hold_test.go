package fleet

import (
	"testing"
	"time"

	"github.com/anymcp/anymcp/testservers"
)

// A Conn the host holds (Fleet.Hold) is not stopped when idle, however
// long the host keeps it; once released, the idle stop applies again.
func TestHoldKeepsServer(t *testing.T) {
	held, heldPIDs := stdioServer(t, testservers.Options{})
	free, freePIDs := stdioServer(t, testservers.Options{})
	rec := newRecorder()
	f, err := New([]Server{{Name: "held", Target: held}, {Name: "free", Target: free}},
		WithIdleStop(20*time.Millisecond), OnStateChange(rec.record))
	if err != nil {
		t.Fatal(err)
	}
	defer checkGone(t, heldPIDs, freePIDs)
	defer f.Close()
	ctx := ctxT(t)
	c, release, err := f.Hold(ctx, "held")
	if err != nil {
		t.Fatal(err)
	}
	// "free", used after "held" was taken, is stopped: "held" would have
	// been by then too. Its idle timer firing now stops nothing either.
	if _, err := f.Conn(ctx, "free"); err != nil {
		t.Fatal(err)
	}
	rec.wait(ctx, t, 0, is("free", StateStopped))
	m := f.byName["held"]
	m.mu.Lock()
	gen := m.idleGen
	m.mu.Unlock()
	m.idleStop(gen)
	if i := rec.index(is("held", StateStopped)); i >= 0 {
		t.Fatalf("a held server was stopped: %v", rec.all())
	}
	if _, err := c.CallTool(ctx, "echo", map[string]any{"text": "x"}); err != nil {
		t.Fatalf("a call on the held Conn: %v", err)
	}
	if st := m.status(); st.State != StateReady {
		t.Errorf("held: %+v", st)
	}
	release()
	release() // a second release counts nothing
	rec.wait(ctx, t, 0, is("held", StateStopped))
	m.mu.Lock()
	busy := m.busy
	m.mu.Unlock()
	if busy != 0 {
		t.Errorf("%d uses counted after the release, want 0", busy)
	}
	if err := f.Close(); err != nil {
		t.Error(err)
	}
	release() // after Close: harmless
}

package fleet

import (
	"sync"
	"testing"

	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/testservers"
)

// TestOnStateChangeFromTo: OnStateChange is told each server's Status
// before and after, as client.OnStateChange is told a Conn's states: the
// first change starts from StateNotConnected, each next one from where
// the last ended, and the Status says why a server failed.
func TestOnStateChangeFromTo(t *testing.T) {
	srv := testservers.StartStatus(testservers.StatusOptions{PostStatus: 500})
	defer srv.Close()
	var mu sync.Mutex
	var changes [][2]Status
	f, err := New([]Server{{Name: "s", Target: client.URL(srv.URL)}}, OnStateChange(func(from, to Status) {
		mu.Lock()
		changes = append(changes, [2]Status{from, to})
		mu.Unlock()
	}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Tools(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil { // Close delivers what is queued before it returns
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []State{StateConnecting, StateFailed, StateClosed}
	if len(changes) != len(want) {
		t.Fatalf("%d changes, want %d: %+v", len(changes), len(want), changes)
	}
	prev := StateNotConnected
	for i, c := range changes {
		from, to := c[0], c[1]
		if from.Server != "s" || to.Server != "s" || from.State != prev || to.State != want[i] {
			t.Errorf("change %d: %s %v → %s %v, want %v → %v", i, from.Server, from.State, to.Server, to.State, prev, want[i])
		}
		prev = to.State
	}
	if failed := changes[1][1]; failed.Err == nil || failed.Err.Kind != KindRefused {
		t.Errorf("the failure's Status: %+v", failed)
	}
	if from := changes[2][0]; from.Err == nil {
		t.Errorf("the change to closed starts from %+v, without the failure's error", from)
	}
}

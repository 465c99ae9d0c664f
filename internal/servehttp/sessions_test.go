package servehttp

import (
	"slices"
	"testing"
	"time"
)

// fakeClock is the table's time, moved by the test.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestTableBoundAndIdle(t *testing.T) {
	clk := &fakeClock{time.Unix(1000, 0)}
	tab := NewTable[string](2, nil)
	tab.now = clk.now
	if !tab.Add("a", "A") || tab.Add("a", "again") {
		t.Fatal("add a, or a taken twice")
	}
	clk.t = clk.t.Add(time.Minute)
	tab.Add("b", "B")
	if tab.Add("c", "C") {
		t.Fatal("a third session in a table of two")
	}
	// Nobody idle for an hour: no room.
	if _, was, ok := tab.MakeRoom(time.Hour); ok || was {
		t.Fatal("room made by ending a session in use")
	}
	// a is the longer idle: it goes.
	clk.t = clk.t.Add(2 * time.Minute)
	if s, was, ok := tab.MakeRoom(90 * time.Second); !ok || !was || s != "A" {
		t.Fatalf("evicted %q %v %v, want A", s, was, ok)
	}
	if !tab.Add("c", "C") {
		t.Fatal("no room after MakeRoom")
	}
	// Touch keeps b alive; c is idle past the cutoff.
	clk.t = clk.t.Add(10 * time.Minute)
	tab.Touch("b")
	if gone := tab.Idle(clk.t.Add(-time.Minute)); !slices.Equal(gone, []string{"C"}) {
		t.Fatalf("idle %v, want [C]", gone)
	}
	if s, ok := tab.Get("b"); !ok || s != "B" || tab.Len() != 1 {
		t.Fatalf("get b %q %v, len %d", s, ok, tab.Len())
	}
	if tab.RemoveIf("b", func(s string) bool { return s == "other" }) || !tab.RemoveIf("b", func(s string) bool { return s == "B" }) {
		t.Fatal("RemoveIf")
	}
	tab.Add("d", "D")
	if all := tab.Drain(); !slices.Equal(all, []string{"D"}) || tab.Len() != 0 {
		t.Fatalf("drain %v", all)
	}
}

// A table that asks its sessions: a busy one is never idle.
func TestTableLastUsedFromSession(t *testing.T) {
	type sess struct {
		name string
		last time.Time
	}
	now := time.Unix(5000, 0)
	tab := NewTable(1, func(s *sess) time.Time { return s.last })
	tab.now = func() time.Time { return now }
	busy := &sess{"busy", now}
	tab.Add("x", busy)
	if _, _, ok := tab.MakeRoom(time.Second); ok {
		t.Fatal("evicted a session that says it is in use")
	}
	busy.last = now.Add(-time.Hour)
	if s, _, ok := tab.MakeRoom(time.Second); !ok || s != busy {
		t.Fatal("an idle session was not evicted")
	}
}

func TestNewSessionID(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := NewSessionID()
		if len(id) != 32 || seen[id] {
			t.Fatalf("id %q (seen %v)", id, seen[id])
		}
		if _, err := PlainValue(id); err != nil {
			t.Fatalf("id %q is no header value", id)
		}
		seen[id] = true
	}
}

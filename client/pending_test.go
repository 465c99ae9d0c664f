package client

import (
	"errors"
	"testing"
)

// Once closed, the table of pending requests takes none, and says why the
// Conn is done: the first reason given.
func TestPendingTableClose(t *testing.T) {
	p := newPendingTable()
	a := &call{method: "a"}
	if err := p.add(1, a); err != nil {
		t.Fatal(err)
	}
	first, second := errors.New("first"), errors.New("second")
	p.close(first)
	p.close(second)
	if err := p.add(2, &call{method: "b"}); err != first {
		t.Fatalf("add after close: %v, want %v", err, first)
	}
	if p.get(2) != nil {
		t.Fatal("a call refused by a closed table is in it")
	}
	if got := p.drain(nil); len(got) != 1 || got[0] != a {
		t.Fatalf("drain: %v, want the call added before close", got)
	}
	if p.len() != 0 {
		t.Fatalf("after drain: %d calls, want 0", p.len())
	}
}

// drain keeps what keep keeps, and take removes a call once.
func TestPendingTableDrainKeepTake(t *testing.T) {
	p := newPendingTable()
	kept, gone := &call{method: "kept", recovery: true}, &call{method: "gone"}
	for id, cl := range map[int64]*call{1: kept, 2: gone} {
		if err := p.add(id, cl); err != nil {
			t.Fatal(err)
		}
	}
	got := p.drain(func(_ int64, cl *call) bool { return cl.recovery })
	if len(got) != 1 || got[0] != gone {
		t.Fatalf("drain: %v, want only the call not kept", got)
	}
	if p.get(1) != kept {
		t.Fatal("the kept call left the table")
	}
	if p.take(1) != kept || p.take(1) != nil {
		t.Fatal("take: want the call once, then none")
	}
}

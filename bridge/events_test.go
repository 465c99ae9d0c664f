package bridge

import (
	"testing"

	"github.com/anymcp/anymcp/jsonrpc"
)

// A POST stream whose client does not read is cut at the bound; the GET
// stream keeps its newest events instead. Neither grows past it.
func TestEventStreamBounds(t *testing.T) {
	note := &jsonrpc.Message{Method: "notifications/message", Params: []byte(`{"level":"info","data":"x"}`)}
	post := newEventStream(1, false, 4)
	for i := range 4 {
		if !post.send(note) {
			t.Fatalf("cut at %d", i)
		}
	}
	if post.send(note) {
		t.Fatal("a fifth unread event was taken")
	}
	if post.log.Len() != 0 || !post.cut {
		t.Fatalf("cut stream keeps %d events", post.log.Len())
	}
	get := newEventStream(0, true, 4)
	for range 100 {
		if !get.send(note) {
			t.Fatal("the GET stream refused an event")
		}
	}
	if kept, gap := get.log.After(0); len(kept) != 4 || kept[0].Seq != 97 || !gap {
		t.Fatalf("GET stream keeps %d events from %d", len(kept), kept[0].Seq)
	}
	if sid, seq, ok := parseEventID(get.eventID(42)); !ok || sid != 0 || seq != 42 {
		t.Fatalf("event id round trip: %d %d %v", sid, seq, ok)
	}
}

package wire

import (
	"testing"

	"github.com/anymcp/anymcp/jsonrpc"
)

// TestTaker: nothing is taken before Set; after it, Offer reports what the
// take function answers, and a later Set replaces the function.
func TestTaker(t *testing.T) {
	var k Taker
	if k.Offer(msg(1)) {
		t.Fatal("taken with no take function")
	}
	var got []string
	k.Set(func(m *jsonrpc.Message) bool { got = append(got, m.ID.Raw()); return m.ID.Raw() == "2" })
	if k.Offer(msg(1)) || !k.Offer(msg(2)) {
		t.Error("Offer does not report the take function's answer")
	}
	k.Set(func(*jsonrpc.Message) bool { return false })
	if k.Offer(msg(2)) || len(got) != 2 {
		t.Errorf("the replaced function still runs: %v", got)
	}
}

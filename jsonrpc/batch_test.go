package jsonrpc

import (
	"bytes"
	"errors"
	"runtime"
	"strings"
	"testing"
)

// batchOf returns a batch of n copies of member.
func batchOf(member string, n int) []byte {
	return []byte("[" + strings.TrimSuffix(strings.Repeat(member+",", n), ",") + "]")
}

// A batch of more than MaxBatch messages is refused whole, by both
// decoders; one of MaxBatch is decoded.
func TestBatchBounded(t *testing.T) {
	const note = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`
	for name, decode := range map[string]func([]byte) ([]*Message, error){"Decode": Decode, "DecodeOwned": DecodeOwned} {
		msgs, err := decode(batchOf(note, MaxBatch))
		if err != nil || len(msgs) != MaxBatch {
			t.Errorf("%s: a batch of %d: %d messages, %v", name, MaxBatch, len(msgs), err)
		}
		for _, member := range []string{note, `{}`} {
			msgs, err = decode(batchOf(member, MaxBatch+1))
			var de *DecodeError
			if !errors.As(err, &de) || !strings.Contains(de.Reason, "more than 1024") || len(msgs) != 0 {
				t.Errorf("%s: a batch of %d %s: %d messages, %v; want it refused whole", name, MaxBatch+1, member, len(msgs), err)
			}
		}
	}
}

// A line of tiny members costs a refusal, not a hundred times its size:
// 16 MiB of `{},` allocates almost nothing (it allocated 5.6 GiB, errors
// and all, before the bound).
func TestHugeBatchAllocatesLittle(t *testing.T) {
	line := batchOf(`{}`, 16<<20/3)
	for name, decode := range map[string]func([]byte) ([]*Message, error){"Decode": Decode, "DecodeOwned": DecodeOwned} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := decode(bytes.Clone(line))
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Fatalf("%s: no error", name)
		}
		_ = err.Error()
		runtime.ReadMemStats(&after)
		if got := after.TotalAlloc - before.TotalAlloc; got > uint64(len(line))+1<<20 {
			t.Errorf("%s: allocated %d MiB for a %d MiB line", name, got>>20, len(line)>>20)
		}
	}
}

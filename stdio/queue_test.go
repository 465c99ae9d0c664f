package stdio

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/internal/testkit"
)

// TestStdoutQueueBytes: while nobody calls Recv, the stdout goroutine
// queues lines up to queueBytes and then stops reading; each Recv that
// frees a line lets the next one in, and every message arrives in order.
func TestStdoutQueueBytes(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	tr := &Transport{
		log:        slog.New(slog.DiscardHandler),
		stdout:     r,
		maxLine:    DefaultMaxLineSize,
		msgs:       make(chan queued, queueLen),
		room:       make(chan struct{}, 1),
		closeCh:    make(chan struct{}),
		stdoutDone: make(chan struct{}),
		sh:         newShared(),
	}
	tr.waitingAt.Store(-1)
	go tr.readStdout()
	defer func() {
		w.Close()
		<-tr.stdoutDone
		r.Close()
	}()

	// Lines of 1.5 MiB: two fit in queueBytes (4 MiB), a third does not.
	const lines = 8
	pad := strings.Repeat("x", 3<<19)
	line := func(i int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":"n","params":{"i":%d,"pad":"%s"}}`, i, pad)
	}
	size := int64(len(line(0)))
	if 2*size > queueBytes || 3*size <= queueBytes {
		t.Fatalf("a line of %d bytes does not test a bound of %d", size, queueBytes)
	}
	writeErr := make(chan error, 1)
	go func() {
		for i := range lines {
			if _, err := w.WriteString(line(i) + "\n"); err != nil {
				writeErr <- err
				return
			}
		}
		writeErr <- nil
	}()

	queuedTwo := func() bool { return len(tr.msgs) == 2 && tr.queuedBytes.Load() == 2*size }
	for i := range lines {
		if i+2 <= lines {
			testkit.Eventually(t, 10*time.Second, fmt.Sprintf("two lines queued before Recv %d", i), queuedTwo)
		}
		m, err := tr.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf(`{"i":%d,`, i); !strings.HasPrefix(string(m.Params), want) {
			t.Fatalf("message %d: %.20s", i, m.Params)
		}
	}
	if err := <-writeErr; err != nil {
		t.Fatal(err)
	}
	if n := tr.queuedBytes.Load(); n != 0 {
		t.Errorf("%d bytes still counted as queued", n)
	}
}

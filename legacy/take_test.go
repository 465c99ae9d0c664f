package legacy

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/jsonrpc"
)

// TestTakeAnswers: a response on the stream that finds Recv waiting with
// nothing queued goes straight to the take function (jsonrpc.AnswerTaker);
// one with a message still queued before it goes through Recv after it, so
// the order the protocol layer sees is the stream's, whichever way each
// response went. A declined response comes through Recv.
func TestTakeAnswers(t *testing.T) {
	for _, accept := range []bool{true, false} {
		t.Run(fmt.Sprintf("accept=%v", accept), func(t *testing.T) {
			s := newSSEServer(t)
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			tr, err := Dial(ctx, s.URL+"/sse", Options{})
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var log []string
			taken := 0
			tr.TakeAnswers(func(m *jsonrpc.Message) bool {
				if !accept {
					return false
				}
				mu.Lock()
				defer mu.Unlock()
				log = append(log, describe(m))
				taken++
				return true
			})
			done := make(chan struct{})
			go func() {
				defer close(done)
				for {
					m, err := tr.Recv()
					if err != nil {
						return
					}
					mu.Lock()
					log = append(log, describe(m))
					mu.Unlock()
				}
			}()
			defer func() { tr.Close(); <-done }()
			snapshot := func() ([]string, int) {
				mu.Lock()
				defer mu.Unlock()
				return slices.Clone(log), taken
			}

			testkit.Eventually(t, wait, "Recv to wait", tr.queue.Drained)
			s.events <- messageEvent(response("1", `{}`))
			want := []string{"response 1 {}"}
			testkit.Eventually(t, wait, "the first answer", func() bool { l, _ := snapshot(); return len(l) == 1 })
			if l, n := snapshot(); !slices.Equal(l, want) || (n == 1) != accept {
				t.Fatalf("an answer to a waiting Recv: log %q, %d taken; accept %v", l, n, accept)
			}

			// Each answer right after a notification of its own, in bursts.
			for i := 2; i < 402; i++ {
				s.events <- messageEvent(note(fmt.Sprintf("n/%d", i)))
				s.events <- messageEvent(response(fmt.Sprint(i), `{}`))
				want = append(want, fmt.Sprintf("notification n/%d", i), fmt.Sprintf("response %d {}", i))
			}
			testkit.Eventually(t, wait, "every message", func() bool { l, _ := snapshot(); return len(l) >= len(want) })
			l, n := snapshot()
			if !slices.Equal(l, want) {
				t.Fatalf("order seen:\n%q\nwant:\n%q", l, want)
			}
			t.Logf("%d of %d answers taken", n, 401)
		})
	}
}

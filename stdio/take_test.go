//go:build linux

package stdio_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/anymcp/anymcp/internal/testkit"
	"github.com/anymcp/anymcp/jsonrpc"
	"github.com/anymcp/anymcp/stdio"
)

// takeLog runs a Recv loop on tr and gives tr a take function; both write
// what they get to one log, so the log is the order the protocol layer
// would see the messages in.
type takeLog struct {
	mu    sync.Mutex
	log   []string
	taken int
	done  chan struct{}
}

func newTakeLog(tr *stdio.Transport, accept bool) *takeLog {
	l := &takeLog{done: make(chan struct{})}
	tr.TakeAnswers(func(m *jsonrpc.Message) bool {
		if !accept {
			return false
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		l.log = append(l.log, "response "+m.ID.Raw())
		l.taken++
		return true
	})
	go func() {
		defer close(l.done)
		for {
			m, err := tr.Recv()
			if err != nil {
				return
			}
			l.mu.Lock()
			if m.IsResponse() {
				l.log = append(l.log, "response "+m.ID.Raw())
			} else {
				l.log = append(l.log, "note "+string(m.Params))
			}
			l.mu.Unlock()
		}
	}()
	return l
}

func (l *takeLog) await(t *testing.T, n int) (log []string, taken int) {
	t.Helper()
	testkit.Eventually(t, patience, fmt.Sprintf("%d messages received", n), func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.log) >= n
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.log), l.taken
}

// TestTakeAnswers: a response that finds Recv waiting with every earlier
// message received goes straight to the take function
// (jsonrpc.AnswerTaker); a response with a message before it still queued
// goes through Recv after it, so the order the protocol layer sees is the
// order the server wrote, whichever way each response went. A declined
// response comes through Recv.
func TestTakeAnswers(t *testing.T) {
	for _, supervised := range []bool{false, true} {
		t.Run(fmt.Sprintf("supervised=%v", supervised), func(t *testing.T) {
			cmd := fakeCommand(t, modeEcho)
			if supervised {
				cmd.Restart = tinyPolicy()
			}
			tr := start(t, cmd)
			l := newTakeLog(tr, true)
			waitRecvWaits(t, tr)
			send(t, tr, request(1, "echo", `{}`))
			if log, taken := l.await(t, 1); taken != 1 || !slices.Equal(log, []string{"response 1"}) {
				t.Fatalf("an answer to a waiting Recv: log %q, %d taken; want it taken", log, taken)
			}

			// Each answer comes right after a notification of its own.
			const n = 200
			want := []string{"response 1"}
			for i := int64(2); i < n+2; i++ {
				send(t, tr, request(i, "noted", `{}`))
				want = append(want, fmt.Sprintf(`note {"before":%d}`, i), fmt.Sprintf("response %d", i))
			}
			log, taken := l.await(t, len(want))
			if !slices.Equal(log, want) {
				t.Fatalf("order seen:\n%q\nwant:\n%q", log, want)
			}
			t.Logf("%d of %d answers taken", taken, n+1)
			// A supervisor counts every answer, taken or received: its
			// process leaves nothing unanswered.
			if supervised && stdio.Unanswered(tr) != 0 {
				t.Fatalf("%d requests counted unanswered after every answer came (%d taken)", stdio.Unanswered(tr), taken)
			}
			tr.Close()
			<-l.done
		})
	}
	t.Run("declined", func(t *testing.T) {
		tr := start(t, fakeCommand(t, modeEcho))
		l := newTakeLog(tr, false)
		waitRecvWaits(t, tr)
		send(t, tr, request(1, "echo", `{}`))
		if log, _ := l.await(t, 1); !slices.Equal(log, []string{"response 1"}) {
			t.Fatalf("a declined answer: log %q, want it through Recv", log)
		}
		tr.Close()
		<-l.done
	})
}

// waitRecvWaits waits until Recv waits with every message received.
func waitRecvWaits(t *testing.T, tr *stdio.Transport) {
	t.Helper()
	testkit.Eventually(t, patience, "Recv to wait", func() bool { return stdio.RecvWaits(tr) })
}

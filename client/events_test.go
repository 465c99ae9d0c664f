package client

import (
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anymcp/anymcp/mcp"
)

// logRecord is a notifications/message whose data is a string of n bytes.
func logRecord(n int) string {
	return `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + strings.Repeat("x", n) + `"}}`
}

// paramsOf is the size of the params of logRecord(n).
func paramsOf(n int) int { return len(`{"level":"info","data":""}`) + n }

// blockedLog is an OnLog handler that blocks until release is closed;
// entered gets a value when it has taken its first notification.
func blockedLog(entered chan<- struct{}, release <-chan struct{}) Option {
	return OnLog(func(mcp.LoggingMessageParams) {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-release
	})
}

// TestHandlerQueueBounds: notifications wait for a blocked handler up to
// a count and a byte bound, the rest are dropped and counted; one bigger
// than the byte bound still goes through when none waits. The byte bound
// is lowered to 1 MiB, to keep the test quick.
func TestHandlerQueueBounds(t *testing.T) {
	const (
		big      = 64 << 10
		maxBytes = 1 << 20
	)
	tests := []struct {
		name      string
		sizes     func() []int // data sizes sent while the handler is blocked
		wantQueue int          // notifications left waiting
	}{
		{name: "count", sizes: func() []int { return repeat(10, maxPendingNotifications+100) },
			wantQueue: maxPendingNotifications},
		{name: "bytes", sizes: func() []int { return repeat(big, 40) },
			wantQueue: maxBytes / paramsOf(big)},
		{name: "one oversize alone", sizes: func() []int { return []int{maxBytes + 1, 1} },
			wantQueue: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				entered, release := make(chan struct{}, 1), make(chan struct{})
				c, p := openScripted(t, blockedLog(entered, release))
				defer close(release)
				c.events.mu.Lock()
				c.events.maxBytes = maxBytes
				c.events.mu.Unlock()
				p.send(logRecord(1))
				<-entered
				sizes := tt.sizes()
				for _, n := range sizes {
					p.send(logRecord(n))
				}
				waitFor(t, "the read loop to take every notification", func() bool {
					return c.DroppedNotifications()+int64(c.events.len()) == int64(len(sizes))
				})
				if n := c.events.len(); n != tt.wantQueue {
					t.Errorf("%d waiting, want %d", n, tt.wantQueue)
				}
				if d := c.DroppedNotifications(); d != int64(len(sizes)-tt.wantQueue) {
					t.Errorf("dropped %d, want %d", d, len(sizes)-tt.wantQueue)
				}
			})
		})
	}
}

func repeat(v, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// TestListChangedMergedNeverDropped: a list_changed that arrives while the
// handlers' queue is full is still delivered, and those that arrive while
// one of their kind waits are merged into it.
func TestListChangedMergedNeverDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		entered, release := make(chan struct{}, 1), make(chan struct{})
		var tools, prompts atomic.Int32
		c, p := openScripted(t, blockedLog(entered, release),
			OnToolsChanged(func() { tools.Add(1) }),
			OnPromptsChanged(func() { prompts.Add(1) }))
		p.send(logRecord(1))
		<-entered
		for range maxPendingNotifications + 9 {
			p.send(logRecord(1))
		}
		for range 3 {
			p.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
		}
		p.send(`{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`)
		p.send(logRecord(1)) // the read loop has routed everything before once this one is dropped
		waitFor(t, "the read loop to route every notification", func() bool { return c.DroppedNotifications() == 10 })
		close(release)
		waitFor(t, "the handlers to run", func() bool { return tools.Load() == 1 && prompts.Load() == 1 && c.events.len() == 0 })

		p.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`) // after the handler ran: a new change
		waitFor(t, "the second change", func() bool { return tools.Load() == 2 })
		if n := c.DroppedNotifications(); n != 10 {
			t.Errorf("dropped %d, want the 10 log records past the bound", n)
		}
	})
}

// TestEventQueueGoroutineOnDemand: the queue's goroutine starts with the
// first function and ends once none is left, so an idle Conn keeps none;
// functions still run one at a time, in order, across those restarts, and
// close runs what is queued before it returns.
func TestEventQueueGoroutineOnDemand(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newEventQueue(slog.New(slog.DiscardHandler))
		working := func() bool {
			q.mu.Lock()
			defer q.mu.Unlock()
			return q.working
		}
		if working() {
			t.Fatal("a new queue runs a goroutine")
		}
		var got []int
		var mu sync.Mutex
		record := func(i int) func() {
			return func() { mu.Lock(); got = append(got, i); mu.Unlock() }
		}
		release := make(chan struct{})
		q.push(func() { <-release })
		for i := range 3 {
			q.push(record(i))
		}
		if !working() {
			t.Fatal("no goroutine runs the queued functions")
		}
		close(release)
		waitFor(t, "the goroutine to end once the queue is empty", func() bool { return !working() })
		for i := 3; i < 6; i++ {
			q.push(record(i))
		}
		release2 := make(chan struct{})
		q.push(func() { <-release2 })
		q.push(record(6))
		close(release2)
		q.close()
		if working() {
			t.Error("close returned with the goroutine running")
		}
		if want := []int{0, 1, 2, 3, 4, 5, 6}; !slices.Equal(got, want) {
			t.Errorf("ran %v, want %v", got, want)
		}
		q.push(record(7)) // after close: not run
		if working() || len(got) != 7 {
			t.Errorf("a function queued after close ran or started a goroutine")
		}
	})
}

// TestEventQueuePushBounded: what the Conn itself queues (state changes,
// re-initializations) is bounded too: behind a handler that never returns,
// past maxPendingEvents the next ones are dropped, not queued without end.
func TestEventQueuePushBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newEventQueue(slog.New(slog.DiscardHandler))
		release := make(chan struct{})
		q.push(func() { <-release })
		waitFor(t, "the handler to start", func() bool { return q.len() == 0 })
		ran := 0
		for range maxPendingEvents + 10 {
			q.push(func() { ran++ })
		}
		if n := q.len(); n != maxPendingEvents {
			t.Errorf("%d events queued, want %d", n, maxPendingEvents)
		}
		close(release)
		q.close()
		if ran != maxPendingEvents {
			t.Errorf("%d events ran, want %d", ran, maxPendingEvents)
		}
	})
}

// TestListChangedDroppedNotLost: a list change that finds the Conn's own
// events past their bound is dropped, and the next change calls the
// handler again, where the merged change waited for ever.
func TestListChangedDroppedNotLost(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		changed := make(chan struct{}, 1)
		c, p := openScripted(t, OnToolsChanged(func() { changed <- struct{}{} }))
		release := make(chan struct{})
		c.events.push(func() { <-release })
		waitFor(t, "the blocking event to run", func() bool { return c.events.len() == 0 })
		for range maxPendingEvents {
			c.events.push(func() {})
		}
		p.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
		p.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`) // answered after the change was taken in
		if m := p.next(); m.ID.Raw() != `"p"` {
			t.Fatalf("got %+v, want the answer to ping", m)
		}
		close(release)
		waitFor(t, "the queue to drain", func() bool { return c.events.len() == 0 && !c.events.running.Load() })
		p.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatal("a list change after a dropped one never reached the handler")
		}
	})
}

package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// The drain waits while a standalone stream is open: quiet after the
// last thing it brought (from the start when nothing), the grace at most
// when it keeps talking; not at all with no stream open, and no longer
// than its context lives.
func TestStandaloneStreamDrain(t *testing.T) {
	const quiet, grace = 100 * time.Millisecond, time.Second
	open := func(s *standaloneStream) io.ReadCloser {
		return s.watch(io.NopCloser(strings.NewReader("data: x\n\n")))
	}
	for _, tc := range []struct {
		name string
		run  func(s *standaloneStream, later func(d time.Duration, f func()))
		want time.Duration
	}{
		{"no stream", func(*standaloneStream, func(time.Duration, func())) {}, 0},
		{"stream closed", func(s *standaloneStream, _ func(time.Duration, func())) { open(s).Close() }, 0},
		{"quiet stream", func(s *standaloneStream, _ func(time.Duration, func())) { open(s) }, quiet},
		{"a log at 50ms", func(s *standaloneStream, later func(time.Duration, func())) {
			open(s)
			later(50*time.Millisecond, s.active)
		}, 150 * time.Millisecond},
		{"bytes read at 80ms", func(s *standaloneStream, later func(time.Duration, func())) {
			body := open(s)
			later(80*time.Millisecond, func() { body.Read(make([]byte, 3)) }) //nolint:errcheck // bytes only
		}, 180 * time.Millisecond},
		{"the stream ends at 80ms", func(s *standaloneStream, later func(time.Duration, func())) {
			body := open(s)
			later(80*time.Millisecond, func() { io.ReadAll(body) }) //nolint:errcheck // to its end
		}, 180 * time.Millisecond}, // quiet from the last bytes, though the stream ended
		{"a chatty stream", func(s *standaloneStream, later func(time.Duration, func())) {
			open(s)
			for i := range 150 { // every 10 ms for 1.5 s
				later(time.Duration(i+1)*10*time.Millisecond, s.active)
			}
		}, grace},
		{"interrupted", func(s *standaloneStream, later func(time.Duration, func())) {
			open(s)
			later(30*time.Millisecond, nil) // nil: the run's context ends
		}, 30 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &standaloneStream{}
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				var timers []*time.Timer
				tc.run(s, func(d time.Duration, f func()) {
					if f == nil {
						f = cancel
					}
					timers = append(timers, time.AfterFunc(d, f))
				})
				if got := s.drain(ctx, quiet, grace); got != tc.want {
					t.Errorf("drain waited %v, want %v", got, tc.want)
				}
				for _, tm := range timers {
					tm.Stop()
				}
			})
		})
	}
}

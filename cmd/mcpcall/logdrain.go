package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// When the server's logs were asked for (--log-level), a call to an
// initialize-era Streamable HTTP server whose standalone GET stream is
// open ends with a drain: mcpcall waits until that stream has been quiet
// for logDrainQuiet (counting from the answer), and logDrainGrace at most,
// so that a log the server sent on it just before its answer on the POST
// stream is shown (nothing orders two streams). Measured on loopback
// (TestMeasureStandaloneLogLag; docs/mcpcall.md): the last log arrives at
// most 5 ms after the answer on a busy machine, 48 ms with the CPUs
// saturated besides; 12 ms from the TypeScript SDK's example server.
const (
	logDrainQuiet = 100 * time.Millisecond
	logDrainGrace = time.Second
)

// standaloneStream follows the event streams that GETs open through
// mcpcall's HTTP client (roundTripper): how many are open, and when one
// last brought bytes or a server log was shown.
type standaloneStream struct {
	mu   sync.Mutex
	open int
	last time.Time
}

// watch returns body, a GET's event stream, counted as open until it
// ends or is closed, each read that brings bytes noted.
func (s *standaloneStream) watch(body io.ReadCloser) io.ReadCloser {
	s.mu.Lock()
	s.open++
	s.mu.Unlock()
	return &watchedBody{ReadCloser: body, s: s}
}

// active notes that the stream brought something now.
func (s *standaloneStream) active() {
	s.mu.Lock()
	s.last = time.Now()
	s.mu.Unlock()
}

// drain waits, when a stream is open, until none has brought anything
// for quiet (counting from now), grace at most, or until ctx ends (a
// stream that ends meanwhile may have brought a message still on its way
// to the handlers). It returns how long it waited: 0 at once when no
// stream is open.
func (s *standaloneStream) drain(ctx context.Context, quiet, grace time.Duration) time.Duration {
	s.mu.Lock()
	open := s.open
	s.mu.Unlock()
	if open == 0 {
		return 0
	}
	start := time.Now()
	end := start.Add(grace)
	for {
		s.mu.Lock()
		last := s.last
		s.mu.Unlock()
		if last.Before(start) {
			last = start
		}
		until := last.Add(quiet)
		if until.After(end) {
			until = end
		}
		d := time.Until(until)
		if d <= 0 {
			return time.Since(start)
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return time.Since(start)
		case <-t.C:
		}
	}
}

// isEventStream reports whether resp, the answer to a GET, opens an event
// stream.
func isEventStream(req *http.Request, resp *http.Response) bool {
	return req.Method == http.MethodGet && resp.StatusCode == http.StatusOK &&
		strings.HasPrefix(strings.ToLower(resp.Header.Get("Content-Type")), "text/event-stream")
}

// watchedBody is an event stream's body that standaloneStream follows.
type watchedBody struct {
	io.ReadCloser
	s    *standaloneStream
	once sync.Once
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.s.active()
	}
	if err != nil {
		b.ended()
	}
	return n, err
}

func (b *watchedBody) Close() error {
	b.ended()
	return b.ReadCloser.Close()
}

func (b *watchedBody) ended() {
	b.once.Do(func() {
		b.s.mu.Lock()
		b.s.open--
		b.s.mu.Unlock()
	})
}

package logtest

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that goroutines may write and read at once: the
// writer of a slog text or JSON handler whose output a test then searches
// (for a credential that must not be there, say). The zero value is ready.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what was written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

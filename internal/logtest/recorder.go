// Package logtest records slog output for tests that check what a package
// logged.
package logtest

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Recorder is a slog.Handler that keeps every record. It is safe for
// concurrent use; the zero value is ready.
type Recorder struct {
	mu   sync.Mutex
	recs []slog.Record
}

// Enabled records every level.
func (r *Recorder) Enabled(context.Context, slog.Level) bool { return true }

// WithAttrs returns r: the tests read the records' own attributes.
func (r *Recorder) WithAttrs([]slog.Attr) slog.Handler { return r }

// WithGroup returns r.
func (r *Recorder) WithGroup(string) slog.Handler { return r }

// Handle keeps a copy of rec.
func (r *Recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec.Clone())
	return nil
}

// Records returns the records kept so far.
func (r *Recorder) Records() []slog.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]slog.Record(nil), r.recs...)
}

// Messages returns the messages logged at level, in order.
func (r *Recorder) Messages(level slog.Level) []string {
	var out []string
	for _, rec := range r.Records() {
		if rec.Level == level {
			out = append(out, rec.Message)
		}
	}
	return out
}

// Attrs returns the attributes of the last record with message msg, as
// strings.
func (r *Recorder) Attrs(msg string) map[string]string {
	out := map[string]string{}
	for _, rec := range r.Records() {
		if rec.Message == msg {
			clear(out)
			rec.Attrs(func(a slog.Attr) bool {
				out[a.Key] = a.Value.String()
				return true
			})
		}
	}
	return out
}

// Durations returns the value of attribute key of every record with message
// msg that has it.
func (r *Recorder) Durations(msg, key string) []time.Duration {
	var out []time.Duration
	for _, rec := range r.Records() {
		if rec.Message != msg {
			continue
		}
		rec.Attrs(func(a slog.Attr) bool {
			if a.Key == key {
				out = append(out, a.Value.Duration())
			}
			return true
		})
	}
	return out
}

// Flat returns every record as a map of strings: "level", "msg" and its
// attributes.
func (r *Recorder) Flat() []map[string]string {
	var out []map[string]string
	for _, rec := range r.Records() {
		m := map[string]string{"level": rec.Level.String(), "msg": rec.Message}
		rec.Attrs(func(a slog.Attr) bool { m[a.Key] = a.Value.String(); return true })
		out = append(out, m)
	}
	return out
}

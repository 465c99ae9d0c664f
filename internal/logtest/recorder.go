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

// WithAttrs returns a handler that keeps its records in r with attrs
// among their attributes, first: a logger made with With logs what it was
// given, and a test that looks for what must not be logged sees it.
func (r *Recorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &withAttrs{root: r, attrs: attrs}
}

// WithGroup returns r: groups are not kept, their attributes are.
func (r *Recorder) WithGroup(string) slog.Handler { return r }

// withAttrs is a Recorder's handler with attributes of its own.
type withAttrs struct {
	root  *Recorder
	attrs []slog.Attr
}

func (w *withAttrs) Enabled(context.Context, slog.Level) bool { return true }

func (w *withAttrs) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &withAttrs{root: w.root, attrs: append(append([]slog.Attr(nil), w.attrs...), attrs...)}
}

func (w *withAttrs) WithGroup(string) slog.Handler { return w }

func (w *withAttrs) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, rec.Message, rec.PC)
	out.AddAttrs(w.attrs...)
	rec.Attrs(func(a slog.Attr) bool { out.AddAttrs(a); return true })
	return w.root.Handle(ctx, out)
}

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

package logtest

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestRecorder(t *testing.T) {
	var r Recorder
	l := slog.New(&r)
	l.Info("retry", "wait", 5*time.Millisecond, "attempt", 1)
	l.Warn("gave up", "attempts", 3)
	l.Info("retry", "wait", 10*time.Millisecond, "attempt", 2)
	if got := r.Messages(slog.LevelWarn); len(got) != 1 || got[0] != "gave up" {
		t.Errorf("warnings %q", got)
	}
	if a := r.Attrs("retry"); a["attempt"] != "2" {
		t.Errorf("last retry attrs %v", a)
	}
	if w := r.Durations("retry", "wait"); len(w) != 2 || w[1] != 10*time.Millisecond {
		t.Errorf("waits %v", w)
	}
	if f := r.Flat(); len(f) != 3 || f[1]["level"] != "WARN" || f[1]["attempts"] != "3" {
		t.Errorf("flat %v", f)
	}
}

// A logger made with With logs its attributes too, through the recorder
// it came from.
func TestRecorderWithAttrs(t *testing.T) {
	var r Recorder
	l := slog.New(&r).With("server", "http://h/mcp").With("session", "s1")
	l.Info("connected", "attempt", 1)
	a := r.Attrs("connected")
	if a["server"] != "http://h/mcp" || a["session"] != "s1" || a["attempt"] != "1" {
		t.Errorf("attrs %v", a)
	}
	if f := r.Flat(); len(f) != 1 || f[0]["session"] != "s1" {
		t.Errorf("flat %v", f)
	}
}

// Buffer takes writes from many goroutines while it is read.
func TestBuffer(t *testing.T) {
	var b Buffer
	l := slog.New(slog.NewTextHandler(&b, nil))
	done := make(chan struct{})
	for i := range 4 {
		go func() { l.Info("x", "i", i); done <- struct{}{} }()
	}
	_ = b.String()
	for range 4 {
		<-done
	}
	if n := strings.Count(b.String(), "msg=x"); n != 4 {
		t.Errorf("%d lines of 4:\n%s", n, b.String())
	}
}

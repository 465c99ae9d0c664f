package logtest

import (
	"log/slog"
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

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/schollz/progressbar/v3"

	"github.com/anymcp/anymcp/mcp"
)

// progressView shows notifications/progress on stderr: a progress bar
// when stderr is a terminal, else one line per update, or one NDJSON
// object per update in --json mode. It never writes to stdout.
type progressView struct {
	mu     sync.Mutex
	w      io.Writer
	asJSON bool
	tty    bool
	bar    *progressbar.ProgressBar
	max    int64
}

func newProgressView(w io.Writer, asJSON, tty bool) *progressView {
	return &progressView{w: w, asJSON: asJSON, tty: tty}
}

// update is the call's progress callback; it runs on the connection's
// read loop, so it only formats and writes.
func (v *progressView) update(p mcp.ProgressParams) {
	v.mu.Lock()
	defer v.mu.Unlock()
	switch {
	case v.asJSON:
		type body struct {
			Progress float64 `json:"progress"`
			Total    float64 `json:"total,omitempty"`
			Message  string  `json:"message,omitempty"`
		}
		b, _ := json.Marshal(map[string]body{"progress": {p.Progress, p.Total, p.Message}})
		fmt.Fprintf(v.w, "%s\n", b)
	case v.tty:
		v.drawBar(p)
	default:
		line := "progress " + formatFloat(p.Progress)
		if p.Total > 0 {
			line += "/" + formatFloat(p.Total)
		}
		if p.Message != "" {
			line += " " + p.Message
		}
		fmt.Fprintln(v.w, line)
	}
}

// drawBar moves the bar; a progress without a total shows a spinner.
func (v *progressView) drawBar(p mcp.ProgressParams) {
	max := int64(-1)
	if p.Total > 0 {
		max = int64(math.Round(p.Total))
	}
	if v.bar == nil {
		v.bar = progressbar.NewOptions64(max,
			progressbar.OptionSetWriter(v.w),
			progressbar.OptionSetWidth(30),
			progressbar.OptionShowCount(),
			progressbar.OptionClearOnFinish(),
			progressbar.OptionSetSpinnerChangeInterval(0), // no ticker goroutine: redraw on updates only
			progressbar.OptionSetPredictTime(false),
		)
		v.max = max
	} else if max != v.max {
		v.bar.ChangeMax64(max)
		v.max = max
	}
	v.bar.Describe(p.Message)
	_ = v.bar.Set64(int64(math.Round(p.Progress)))
}

// finish clears the bar, if one was drawn.
func (v *progressView) finish() {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.bar != nil {
		_ = v.bar.Finish()
		_ = v.bar.Exit()
		v.bar = nil
	}
}

func formatFloat(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return fmt.Sprintf("%d", int64(f))
	}
	return fmt.Sprintf("%g", f)
}

// task shows a status of the task a call became, one line each: "task ID:
// working (message)", or {"task": {...}} in --json mode.
func (v *progressView) task(t mcp.Task) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.asJSON {
		type body struct {
			TaskID        string `json:"taskId"`
			Status        string `json:"status"`
			StatusMessage string `json:"statusMessage,omitempty"`
		}
		b, _ := json.Marshal(map[string]body{"task": {t.TaskID, string(t.Status), t.StatusMessage}})
		fmt.Fprintf(v.w, "%s\n", b)
		return
	}
	line := "task " + shown(t.TaskID) + ": " + shown(string(t.Status))
	if t.StatusMessage != "" {
		line += " (" + shown(t.StatusMessage) + ")"
	}
	if v.bar != nil {
		fmt.Fprintln(v.w) // below the bar, not through it
	}
	fmt.Fprintln(v.w, line)
}

package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/lmittmann/tint"
	"golang.org/x/term"

	"github.com/anymcp/anymcp/mcp"
)

// lockedWriter serialises writes: logs, progress, server stderr and the
// trace may all write to stderr from different goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// isTerminal reports whether f is an *os.File on a terminal.
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

// logLevels are the names --log-level accepts: MCP's syslog levels, and
// "warn" for slog's spelling.
var logLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// parseLogLevel reads a --log-level value as an MCP level and the slog
// level it maps to.
func parseLogLevel(s string) (mcp.LoggingLevel, slog.Level, error) {
	s = strings.ToLower(s)
	if s == "warn" {
		s = "warning"
	}
	lvl := mcp.LoggingLevel(s)
	switch lvl {
	case mcp.LevelDebug:
		return lvl, slog.LevelDebug, nil
	case mcp.LevelInfo, mcp.LevelNotice:
		return lvl, slog.LevelInfo, nil
	case mcp.LevelWarning:
		return lvl, slog.LevelWarn, nil
	case mcp.LevelError, mcp.LevelCritical, mcp.LevelAlert, mcp.LevelEmergency:
		return lvl, slog.LevelError, nil
	}
	return "", 0, usageErr("--log-level %q: want one of %s", s, strings.Join(logLevels, ", "))
}

// newLogger makes mcpcall's logger on stderr: NDJSON in --json mode, tint
// otherwise, coloured only when color is set.
func newLogger(w io.Writer, asJSON bool, level slog.Level, color bool) *slog.Logger {
	if asJSON {
		return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
	}
	return slog.New(tint.NewTextHandler(w, &tint.Options{Level: level, NoColor: !color, TimeFormat: "15:04:05.000"}))
}

// serverLog passes a notifications/message from the server to the logger
// at the matching level.
func serverLog(log *slog.Logger, p mcp.LoggingMessageParams) {
	_, level, err := parseLogLevel(string(p.Level))
	if err != nil {
		level = slog.LevelInfo
	}
	msg := "server log"
	var text string
	attrs := []any{"source", "server"}
	if p.Logger != "" {
		attrs = append(attrs, "logger", p.Logger)
	}
	if json.Unmarshal(p.Data, &text) == nil {
		msg = text
	} else if len(p.Data) > 0 {
		attrs = append(attrs, "data", json.RawMessage(p.Data))
	}
	attrs = append(attrs, "level_mcp", string(p.Level))
	log.Log(context.Background(), level, msg, attrs...)
}

// colorWanted says whether to colour stderr: only on a terminal, and never
// with NO_COLOR set to anything.
func colorWanted(tty bool, getenv func(string) string) bool {
	return tty && getenv("NO_COLOR") == ""
}

// since formats an elapsed time for people.
func since(t time.Time) string {
	d := time.Since(t)
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Millisecond).String()
}

package stdio

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTailBuffer(t *testing.T) {
	sizes := [][]int{
		{0},
		{10},
		{tailSize},
		{tailSize + 1},
		{3000, 3000},
		{1, tailSize * 3, 7},
		{100, 200, 4000, 5, 9000, 1},
	}
	for _, ws := range sizes {
		var b tailBuffer
		var all []byte
		c := byte('a')
		for _, n := range ws {
			p := bytes.Repeat([]byte{c}, n)
			for i := range p {
				p[i] = 'a' + byte((len(all)+i)%26)
			}
			all = append(all, p...)
			b.Write(p)
			c++
		}
		want := all[max(0, len(all)-tailSize):]
		if got := b.String(); got != string(want) {
			t.Errorf("writes %v: tail of %d bytes differs from the last %d written", ws, len(got), len(want))
		}
	}
}

func TestTailBufferCutsNoRune(t *testing.T) {
	var b tailBuffer
	b.Write([]byte("x" + strings.Repeat("€", 2000))) // 1 + 6000 bytes: the tail starts mid-rune
	got := b.String()
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "€€€") || len(got) < tailSize-3 {
		t.Errorf("tail of %d bytes, valid UTF-8: %v", len(got), utf8.ValidString(got))
	}
}

type recordingHandler struct{ lines *[]string }

func (h recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h recordingHandler) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "stderr" {
			*h.lines = append(*h.lines, a.Value.String())
		}
		return true
	})
	return nil
}
func (h recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h recordingHandler) WithGroup(string) slog.Handler      { return h }

func TestLineLogger(t *testing.T) {
	long := strings.Repeat("L", maxLogLine+500)
	tests := []struct {
		name   string
		chunks []string
		want   []string
	}{
		{"one chunk", []string{"a\nb\n"}, []string{"a", "b"}},
		{"split lines", []string{"he", "llo\nwor", "ld\n"}, []string{"hello", "world"}},
		{"crlf and blanks", []string{"a\r\n\n\r\nb\n"}, []string{"a", "b"}},
		{"unterminated last line", []string{"a\nlast"}, []string{"a", "last"}},
		{"long line cut", []string{long[:3000], long[3000:] + "\nnext\n"}, []string{long[:maxLogLine], "next"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			l := lineLogger{log: slog.New(recordingHandler{&got})}
			for _, c := range tt.chunks {
				l.write([]byte(c))
			}
			l.flush()
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("logged %q, want %q", short(got), short(tt.want))
			}
		})
	}
}

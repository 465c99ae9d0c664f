package stdio

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestLineReader(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		max     int
		want    []string
		wantErr error // after the lines; io.EOF or a *LineTooLongError
	}{
		{"lines", "a\nbb\n\nccc\n", 10, []string{"a", "bb", "", "ccc"}, io.EOF},
		{"last line without newline", "a\nbb", 10, []string{"a", "bb"}, io.EOF},
		{"crlf kept for the caller", "a\r\n", 10, []string{"a\r"}, io.EOF},
		{"exactly max", "abcd\nx\n", 4, []string{"abcd", "x"}, io.EOF},
		{"max plus one", "abcde\nx\n", 4, nil, &LineTooLongError{Limit: 4}},
		{"too long after good lines", "ab\ncd\nefghij\n", 4, []string{"ab", "cd"}, &LineTooLongError{Limit: 4}},
		{"too long at EOF", "ab\nefghij", 4, []string{"ab"}, &LineTooLongError{Limit: 4}},
		{"empty", "", 4, nil, io.EOF},
		{"long lines across buffer growth", strings.Repeat("y", 300000) + "\n" + strings.Repeat("z", 200000) + "\n", 1 << 20,
			[]string{strings.Repeat("y", 300000), strings.Repeat("z", 200000)}, io.EOF},
	}
	readers := map[string]func(string) io.Reader{
		"whole":    func(s string) io.Reader { return strings.NewReader(s) },
		"one byte": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		"halves":   func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
	}
	for _, tt := range tests {
		for rname, mk := range readers {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				if rname == "one byte" && len(tt.input) > 10000 {
					t.Skip("slow")
				}
				lr := lineReader{r: mk(tt.input), max: tt.max}
				var got []string
				var err error
				for {
					var line []byte
					line, err = lr.next()
					if err != nil {
						break
					}
					got = append(got, string(line))
				}
				if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
					t.Errorf("lines %q, want %q", short(got), short(tt.want))
				}
				var tl *LineTooLongError
				switch want := tt.wantErr.(type) {
				case *LineTooLongError:
					if !errors.As(err, &tl) || tl.Limit != want.Limit {
						t.Errorf("error %v, want %v", err, want)
					}
				default:
					if err != want {
						t.Errorf("error %v, want %v", err, want)
					}
				}
			})
		}
	}
}

func short(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) > 20 {
			l = l[:20] + "…"
		}
		out[i] = l
	}
	return out
}

// endless is a stream of 'x' with no newline, ever.
type endless struct{ n int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	e.n += int64(len(p))
	return len(p), nil
}

func TestLineReaderBuffersAtMostTheLimit(t *testing.T) {
	for _, limit := range []int{10, 100000, 3 << 20} {
		src := &endless{}
		lr := lineReader{r: src, max: limit}
		_, err := lr.next()
		var tl *LineTooLongError
		if !errors.As(err, &tl) {
			t.Fatalf("limit %d: %v, want *LineTooLongError", limit, err)
		}
		if len(lr.buf) > limit+1 {
			t.Errorf("limit %d: buffer grew to %d bytes", limit, len(lr.buf))
		}
		if src.n > int64(limit)+1+int64(initialLineBuf) {
			t.Errorf("limit %d: read %d bytes before giving up", limit, src.n)
		}
	}
}

func TestLineReaderShrinksAfterLongLine(t *testing.T) {
	input := strings.Repeat("w", 8<<20) + "\nsmall\nsmall\n"
	lr := lineReader{r: strings.NewReader(input), max: 16 << 20}
	if l, err := lr.next(); err != nil || len(l) != 8<<20 {
		t.Fatalf("first line: %d bytes, %v", len(l), err)
	}
	for range 2 {
		if l, err := lr.next(); err != nil || string(l) != "small" {
			t.Fatalf("line %q, %v", l, err)
		}
	}
	if _, err := lr.next(); err != io.EOF {
		t.Fatalf("end: %v", err)
	}
	if len(lr.buf) > keepLineBuf {
		t.Errorf("buffer still %d bytes after the long line was consumed", len(lr.buf))
	}
}

func TestExcerpt(t *testing.T) {
	if got := excerpt("short"); got != "short" {
		t.Errorf("excerpt = %q", got)
	}
	long := strings.Repeat("é", 300) // 2 bytes each: the cut falls inside none
	got := excerpt(long)
	if !strings.HasSuffix(got, "…") || len(got) > warnExcerpt+len("…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Errorf("excerpt of %d bytes: %d bytes %q", len(long), len(got), got[:10])
	}
}

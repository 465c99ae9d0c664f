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
	if len(lr.buf) > initialLineBuf || len(lr.head) > 0 {
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

func TestLineReaderOwnsLongLines(t *testing.T) {
	long1 := strings.Repeat("a", 3*initialLineBuf+17)
	long2 := strings.Repeat("b", initialLineBuf) // exactly the buffer
	input := "short\n" + long1 + "\nmid\n" + long2 + "\n" + long1[:initialLineBuf+1]
	for rname, r := range map[string]io.Reader{
		"whole":  strings.NewReader(input),
		"halves": iotest.HalfReader(strings.NewReader(input)),
	} {
		t.Run(rname, func(t *testing.T) {
			lr := lineReader{r: r, max: 1 << 20}
			var kept [][]byte
			var owned []bool
			for {
				line, err := lr.next()
				if err == io.EOF {
					break
				} else if err != nil {
					t.Fatal(err)
				}
				if !lr.owned {
					line = append([]byte(nil), line...)
				}
				kept = append(kept, line)
				owned = append(owned, lr.owned)
			}
			want := []string{"short", long1, "mid", long2, long1[:initialLineBuf+1]}
			if len(kept) != len(want) {
				t.Fatalf("%d lines, want %d", len(kept), len(want))
			}
			for i := range want {
				if string(kept[i]) != want[i] {
					t.Errorf("line %d: %d bytes %.10q…, want %d bytes", i, len(kept[i]), kept[i], len(want[i]))
				}
				if long := len(want[i]) >= initialLineBuf; owned[i] != long {
					t.Errorf("line %d (%d bytes): owned %v", i, len(want[i]), owned[i])
				}
				if owned[i] && cap(kept[i]) != len(kept[i]) {
					t.Errorf("line %d: capacity %d for %d bytes", i, cap(kept[i]), len(kept[i]))
				}
			}
			if lr.headN != 0 || len(lr.head) != 0 {
				t.Errorf("blocks still held after the lines: %d bytes", lr.headN)
			}
		})
	}
}

func TestLineReaderLongLineLimit(t *testing.T) {
	const limit = 3*initialLineBuf + 5
	ok := strings.Repeat("c", limit)
	lr := lineReader{r: iotest.HalfReader(strings.NewReader(ok + "\n" + ok + "c\n")), max: limit}
	if l, err := lr.next(); err != nil || string(l) != ok {
		t.Fatalf("a line of exactly the limit: %d bytes, %v", len(l), err)
	}
	var tl *LineTooLongError
	if _, err := lr.next(); !errors.As(err, &tl) {
		t.Fatalf("a line of limit+1: %v, want *LineTooLongError", err)
	}
	if lr.headN != 0 || len(lr.head) != 0 {
		t.Errorf("blocks still held after the error: %d bytes", lr.headN)
	}
}

func TestLineReaderReadsAtMostLimitPlusOne(t *testing.T) {
	for _, limit := range []int{10, 100000, 3 << 20} {
		src := &endless{}
		lr := lineReader{r: src, max: limit}
		if _, err := lr.next(); err == nil {
			t.Fatal("no error")
		}
		if src.n != int64(limit)+1 {
			t.Errorf("limit %d: read %d bytes of the line, want exactly limit+1", limit, src.n)
		}
	}
}

// BenchmarkLineReaderBigLine reads one 16 MiB line (and a short one), as a
// big tool result arrives on stdout.
func BenchmarkLineReaderBigLine(b *testing.B) {
	input := strings.Repeat("x", 16<<20) + "\n{}\n"
	sr := strings.NewReader(input)
	b.SetBytes(int64(len(input)))
	b.ReportAllocs()
	for b.Loop() {
		sr.Reset(input)
		lr := lineReader{r: sr, max: DefaultMaxLineSize}
		if l, err := lr.next(); err != nil || len(l) != 16<<20 {
			b.Fatal(len(l), err)
		}
		if _, err := lr.next(); err != nil {
			b.Fatal(err)
		}
	}
}

package sse_test

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/sse"
)

// reference is a deliberately naive, line-by-line transcription of the WHATWG
// event stream interpretation rules, working on the whole input at once. The
// fuzz test checks the streaming Reader against it.
func reference(in []byte) result {
	s := string(in)
	s = strings.TrimPrefix(s, "\ufeff")
	var res result
	var data strings.Builder
	typ := ""
	process := func(line string) {
		if line == "" {
			d := data.String()
			data.Reset()
			t := typ
			typ = ""
			if d == "" {
				return
			}
			d = strings.TrimSuffix(d, "\n")
			if t == "" {
				t = "message"
			}
			res.events = append(res.events, sse.Event{Type: t, Data: []byte(d), ID: res.lastID})
			return
		}
		if line[0] == ':' {
			return
		}
		field, value := line, ""
		if i := strings.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			value = strings.TrimPrefix(value, " ")
		}
		switch field {
		case "event":
			typ = value
		case "data":
			data.WriteString(value)
			data.WriteByte('\n')
		case "id":
			if !strings.ContainsRune(value, 0) {
				res.lastID = value
			}
		case "retry":
			ok := value != ""
			for _, c := range []byte(value) {
				if c < '0' || c > '9' {
					ok = false
				}
			}
			if ok {
				ms, err := strconv.ParseInt(value, 10, 64)
				if err != nil || ms > int64(1<<63-1)/int64(time.Millisecond) {
					res.retry = time.Duration(1<<63 - 1)
				} else {
					res.retry = time.Duration(ms) * time.Millisecond
				}
				res.retryOK = true
			}
		}
	}
	for {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			break // an unterminated last line is discarded
		}
		process(s[:i])
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
	res.err = io.EOF
	return res
}

// splitReader returns the input in reads whose sizes come from cuts; a zero
// size makes a Read return (0, nil), but never twice in a row.
type splitReader struct {
	in    []byte
	cuts  []byte
	i     int
	empty bool // the previous read was empty
}

func (s *splitReader) Read(p []byte) (int, error) {
	if len(s.in) == 0 {
		return 0, io.EOF
	}
	n := len(s.in)
	if len(s.cuts) > 0 {
		n = int(s.cuts[s.i%len(s.cuts)]) % 41
		s.i++
		if n == 0 && s.empty {
			n = 1 // never two empty reads in a row
		}
	}
	s.empty = n == 0
	n = min(n, len(p), len(s.in))
	copy(p, s.in[:n])
	s.in = s.in[n:]
	return n, nil
}

func FuzzReader(f *testing.F) {
	seeds := []string{
		"data: a\n\n",
		"\ufeffdata: a\r\ndata: b\r\n\r\n",
		"data: a\rdata: b\r\r",
		"id: 1\n\nid: 2\x00\ndata\n\n",
		"event: x\ndata:  y\n: c\nretry: 10\nretry: x\n\n",
		"data:\n\ndata\ndata\n\nid\n\n",
		"\ufeff\ufeffdata: a\n\n",
		"retry: 999999999999999999999999\n\nfoo\nbar: baz\n\n",
		"data: a\n\ndata: b",
		"data: " + strings.Repeat("x", 300) + "\r\n\r\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s), []byte{1})
		f.Add([]byte(s), []byte{3, 0, 7, 2})
		f.Add([]byte(s), []byte(nil))
	}
	f.Fuzz(func(t *testing.T, in, cuts []byte) {
		want := reference(in)
		whole := readAll(bytes.NewReader(in), 0)
		split := readAll(&splitReader{in: in, cuts: cuts}, 0)
		for _, got := range []result{whole, split} {
			if got.err != io.EOF {
				t.Fatalf("err = %v", got.err)
			}
			if !sameEvents(got.events, want.events) {
				t.Fatalf("events differ from the reference:\n got %s\nwant %s", fmtEvents(got.events), fmtEvents(want.events))
			}
			if got.lastID != want.lastID || got.retry != want.retry || got.retryOK != want.retryOK {
				t.Fatalf("state: got id=%q retry=%v,%v want id=%q retry=%v,%v",
					got.lastID, got.retry, got.retryOK, want.lastID, want.retry, want.retryOK)
			}
		}
		// With a small limit the Reader must either agree with the reference
		// on the events it returns or stop with ErrEventTooLarge; no event it
		// returns may be larger than the limit.
		const limit = 16
		small := readAll(&splitReader{in: in, cuts: cuts}, limit)
		if small.err != io.EOF && !errors.Is(small.err, sse.ErrEventTooLarge) {
			t.Fatalf("limited: err = %v", small.err)
		}
		if len(small.events) > len(want.events) || !sameEvents(small.events, want.events[:len(small.events)]) {
			t.Fatalf("limited: events differ:\n got %s\nwant %s", fmtEvents(small.events), fmtEvents(want.events))
		}
		for _, e := range small.events {
			if len(e.Data) > limit {
				t.Fatalf("limited: event of %d bytes returned", len(e.Data))
			}
		}
	})
}

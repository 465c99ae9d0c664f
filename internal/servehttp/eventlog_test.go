package servehttp

import (
	"bytes"
	"testing"
)

func seqs(evs []Event) []int {
	var out []int
	for _, e := range evs {
		out = append(out, e.Seq)
	}
	return out
}

func TestEventLogReplay(t *testing.T) {
	l := NewEventLog("7", 3, 0)
	for i := 1; i <= 5; i++ {
		seq, dropped := l.Append([]byte{byte('a' + i)})
		if seq != i || dropped != max(0, min(1, i-3)) {
			t.Fatalf("Append %d: seq %d, dropped %d", i, seq, dropped)
		}
	}
	for _, tt := range []struct {
		after int
		want  []int
		gap   bool
	}{
		{5, nil, false},
		{4, []int{5}, false},
		{2, []int{3, 4, 5}, false},
		{1, []int{3, 4, 5}, true}, // event 2 is gone
		{0, []int{3, 4, 5}, true},
		{9, nil, false},
	} {
		evs, gap := l.After(tt.after)
		if got := seqs(evs); gap != tt.gap || len(got) != len(tt.want) || (len(got) > 0 && got[0] != tt.want[0]) {
			t.Errorf("After(%d) = %v, %v; want %v, %v", tt.after, got, gap, tt.want, tt.gap)
		}
	}
	if l.ID(5) != "7-5" || l.Last() != 5 || l.Len() != 3 {
		t.Errorf("ID %q, Last %d, Len %d", l.ID(5), l.Last(), l.Len())
	}
	l.Reset()
	if evs, gap := l.After(4); len(evs) != 0 || !gap {
		t.Errorf("after Reset: %v, %v", evs, gap)
	}
	if seq, _ := l.Append(nil); seq != 6 {
		t.Errorf("numbering restarted: %d", seq)
	}
}

func TestEventLogBytes(t *testing.T) {
	l := NewEventLog("s", 100, 10)
	l.Append(bytes.Repeat([]byte("a"), 6))
	if _, dropped := l.Append(bytes.Repeat([]byte("b"), 6)); dropped != 1 || l.Bytes() != 6 {
		t.Errorf("dropped %d, bytes %d", dropped, l.Bytes())
	}
	// The newest is kept even alone beyond the bound.
	if _, dropped := l.Append(bytes.Repeat([]byte("c"), 50)); dropped != 1 || l.Len() != 1 || l.Bytes() != 50 {
		t.Errorf("dropped %d, len %d, bytes %d", dropped, l.Len(), l.Bytes())
	}
}

func TestParseEventID(t *testing.T) {
	for in, want := range map[string]struct {
		stream string
		seq    int
		ok     bool
	}{
		"3-14":                   {"3", 14, true},
		" 3-0\t":                 {"3", 0, true},
		"a-b-2":                  {"a-b", 2, true},
		"3.14":                   {"", 0, false},
		"-1":                     {"", 0, false},
		"3-":                     {"", 0, false},
		"3--1":                   {"3-", 1, true}, // stream "3-": no such stream
		"3-+1":                   {"", 0, false},
		"3-99999999999999999999": {"", 0, false},
		"":                       {"", 0, false},
	} {
		s, n, ok := ParseEventID(in)
		if s != want.stream || n != want.seq || ok != want.ok {
			t.Errorf("ParseEventID(%q) = %q, %d, %v", in, s, n, ok)
		}
	}
}

package sse_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/sse"
)

// TestReleasedBuffersAreNotShared reads events with one Reader, releases it,
// then lets other Readers reuse its buffers for other events: the events of
// the first must not change.
func TestReleasedBuffersAreNotShared(t *testing.T) {
	big := strings.Repeat("b", 100<<10) + "\n" + strings.Repeat("c", 3) // spans blocks, two lines
	in := "data: small\n\ndata: " + strings.ReplaceAll(big, "\n", "\ndata: ") + "\n\ndata: unfinished"
	r := sse.NewReader(strings.NewReader(in), 0)
	first, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	second, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	r.Release()
	if _, err := r.Next(); err == nil || err == io.EOF {
		t.Fatalf("Next after Release: %v, want an error other than io.EOF", err)
	}
	r.Release() // idempotent
	for range 20 {
		other := sse.NewReader(strings.NewReader("data: "+strings.Repeat("Z", 70<<10)+"\n\n"), 0)
		if e, err := other.Next(); err != nil || len(e.Data) != 70<<10 {
			t.Fatalf("other reader: %d bytes, %v", len(e.Data), err)
		}
		other.Release()
	}
	if string(first.Data) != "small" || string(second.Data) != big {
		t.Fatalf("an event changed after its Reader's buffers were reused: %.20q %.20q", first.Data, second.Data)
	}
	if cap(second.Data) != len(second.Data) {
		t.Errorf("event data of %d bytes has capacity %d, want its exact size", len(second.Data), cap(second.Data))
	}
}

// TestReleaseKeepsCursor: LastEventID and Retry survive Release and the end
// of the stream.
func TestReleaseKeepsCursor(t *testing.T) {
	r := sse.NewReader(strings.NewReader("id: 7\nretry: 1500\ndata: x\n\n"), 0)
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	r.Release()
	if d, ok := r.Retry(); r.LastEventID() != "7" || !ok || d.Milliseconds() != 1500 {
		t.Errorf("after Release: id %q, retry %v %v", r.LastEventID(), d, ok)
	}
}

// TestErrorReleases: once Next has failed, the sticky error stays and a
// later Release is harmless.
func TestErrorReleases(t *testing.T) {
	boom := errors.New("boom")
	r := sse.NewReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), &errAfter{err: boom}), 0)
	if e, err := r.Next(); err != nil || string(e.Data) != "a" {
		t.Fatalf("%q %v", e.Data, err)
	}
	if _, err := r.Next(); !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}
	r.Release()
	if _, err := r.Next(); !errors.Is(err, boom) {
		t.Fatalf("after Release: err %v, want the sticky boom", err)
	}
}

// BenchmarkStream is one short answer stream, as a POST answered with SSE
// gets: a Reader, one small event, Release.
func BenchmarkStream(b *testing.B) {
	in := []byte("event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hello\"}],\"isError\":false}}\n\n")
	br := bytes.NewReader(in)
	b.ReportAllocs()
	for b.Loop() {
		br.Reset(in)
		r := sse.NewReader(br, 0)
		if _, err := r.Next(); err != nil {
			b.Fatal(err)
		}
		r.Release()
	}
}

// TestDataAtBlockBoundaries: event data whose lines and joins fall on
// and around the edges of the Reader's 32 KiB blocks.
func TestDataAtBlockBoundaries(t *testing.T) {
	const block = 32 << 10
	for _, n := range []int{block - 1, block, block + 1, 2*block - 1, 2 * block, 3*block + 7} {
		a, c := strings.Repeat("a", n), strings.Repeat("c", block-n%block)
		in := "data: " + a + "\ndata: " + c + "\n\ndata:" + a + "\n\n"
		for _, rd := range readers {
			if rd.name == "byte-by-byte" {
				continue
			}
			got := readAll(rd.wrap(in), 0)
			want := []sse.Event{ev("message", a+"\n"+c, ""), ev("message", a, "")}
			if got.err != io.EOF || !sameEvents(got.events, want) {
				t.Errorf("n=%d %s: %d events, err %v", n, rd.name, len(got.events), got.err)
			}
		}
	}
}

// segmentReader serves its segments one after the other, a Read never
// crossing from one into the next (as a stream that pauses between them),
// and records the size of every buffer it was offered.
type segmentReader struct {
	segs   []string
	offers []int
}

func (s *segmentReader) Read(p []byte) (int, error) {
	s.offers = append(s.offers, len(p))
	for len(s.segs) > 0 && s.segs[0] == "" {
		s.segs = s.segs[1:]
	}
	if len(s.segs) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.segs[0])
	s.segs[0] = s.segs[0][n:]
	return n, nil
}

// A large event streaming in is read up to a block (32 KiB) at a time:
// in the middle of a line the next read goes into the block again, not
// into the small buffer an idle stream waits in (a read and a copy more
// per 512 bytes). Between events the Reader waits in the small buffer
// again, holding no block.
func TestLargeEventReadABlockAtATime(t *testing.T) {
	const size = 4 << 20
	src := &segmentReader{segs: []string{"data: " + strings.Repeat("x", size) + "\n\n", "data: y\n\n"}}
	r := sse.NewReader(src, 0)
	defer r.Release()
	e, err := r.Next()
	if err != nil || len(e.Data) != size {
		t.Fatalf("%d bytes, %v", len(e.Data), err)
	}
	// One read per block, and a few at the start (the small buffer) and
	// the end.
	reads := len(src.offers)
	if blocks := size / (32 << 10); reads > blocks+4 {
		t.Errorf("%d reads for a %d-block event, want at most %d", reads, blocks, blocks+4)
	}
	if e, err := r.Next(); err != nil || string(e.Data) != "y" {
		t.Fatalf("the next event: %q, %v", e.Data, err)
	}
	if offer := src.offers[reads]; offer > 512 {
		t.Errorf("after the large event the Reader waited with a %d-byte buffer, want the small one (512)", offer)
	}
}

package servehttp

import (
	"bytes"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestWriteEvent(t *testing.T) {
	for _, tt := range []struct {
		id, name, data, want string
	}{
		{"1-2", "message", `{"a":1}`, "id: 1-2\nevent: message\ndata: {\"a\":1}\n\n"},
		{"", "message", "x", "event: message\ndata: x\n\n"},
		{"", "", "", "data: \n\n"},
		{"", "endpoint", "/message?sessionId=a", "event: endpoint\ndata: /message?sessionId=a\n\n"},
		{"", "", "a\nb\r\nc\rd", "data: a\ndata: b\ndata: c\ndata: d\n\n"},
		{"", "", "trailing\n", "data: trailing\ndata: \n\n"},
		{"", "", " lead", "data:  lead\n\n"},
	} {
		var b bytes.Buffer
		if err := WriteEvent(&b, tt.id, tt.name, []byte(tt.data)); err != nil || b.String() != tt.want {
			t.Errorf("WriteEvent(%q, %q, %q) = %q, %v; want %q", tt.id, tt.name, tt.data, b.String(), err, tt.want)
		}
	}
	for _, bad := range []string{"a\nb", "a\rb", "a\x00b"} {
		var b bytes.Buffer
		if err := WriteEvent(&b, bad, "", nil); !errors.Is(err, ErrEventField) || b.Len() != 0 {
			t.Errorf("id %q: %v, wrote %q", bad, err, b.String())
		}
		if err := WriteEvent(&b, "", bad, nil); !errors.Is(err, ErrEventField) || b.Len() != 0 {
			t.Errorf("name %q: %v, wrote %q", bad, err, b.String())
		}
	}
}

func TestWritePrimeRetryComment(t *testing.T) {
	var b bytes.Buffer
	_ = WritePrime(&b, "3-0", 1500*time.Millisecond)
	_ = WritePrime(&b, "3-4", 0)
	_ = WriteRetry(&b, 2*time.Second)
	_ = WriteComment(&b)
	if want := "id: 3-0\nretry: 1500\ndata:\n\nid: 3-4\ndata:\n\nretry: 2000\n\n:\n\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

func TestStartStream(t *testing.T) {
	rec := httptest.NewRecorder()
	StartStream(rec, true)
	_ = WriteEvent(rec, "", "message", []byte("{}"))
	if err := Flush(rec); err != nil || !rec.Flushed {
		t.Errorf("flush: %v", err)
	}
	h := rec.Result().Header
	if rec.Code != 200 || h.Get("Content-Type") != "text/event-stream" || h.Get("Cache-Control") != "no-cache" || h.Get("X-Accel-Buffering") != "no" {
		t.Errorf("status %d, header %v", rec.Code, h)
	}
	rec = httptest.NewRecorder()
	StartStream(rec, false)
	if rec.Result().Header.Get("X-Accel-Buffering") != "" {
		t.Error("X-Accel-Buffering without noBuffering")
	}
}

// readData joins the data lines of one written event back as an SSE
// client does.
func readData(event string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(event, "\n\n"), "\n") {
		if v, ok := strings.CutPrefix(l, "data:"); ok {
			lines = append(lines, strings.TrimPrefix(v, " "))
		}
	}
	return strings.Join(lines, "\n")
}

func TestWriteEventAllocs(t *testing.T) {
	var b bytes.Buffer
	data := bytes.Repeat([]byte("x"), 300)
	allocs := testing.AllocsPerRun(100, func() {
		b.Reset()
		_ = WriteEvent(&b, "12-345", "message", data)
	})
	if allocs > 1 {
		t.Errorf("%.1f allocations per event", allocs)
	}
}

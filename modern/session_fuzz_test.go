package modern

import (
	"bufio"
	"bytes"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzSessionID: a session id is accepted exactly when it is 1 to
// MaxSessionIDLen bytes of visible ASCII (0x21–0x7E); an accepted one goes
// through an HTTP/1.1 request and back byte for byte, so the server gets
// its own id; a refusal says why in a bounded, valid UTF-8 text.
func FuzzSessionID(f *testing.F) {
	for _, seed := range []string{
		"6f1c1b1e-3c1a-4e0b-9b8e-1f2d3c4b5a69", "a", "", "has space", "tab\there", "crlf\r\nX-Injected: 1",
		"naïve", "ok\x80", "\x7f", "!~", strings.Repeat("x", MaxSessionIDLen), strings.Repeat("x", MaxSessionIDLen+1),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, id string) {
		want := len(id) >= 1 && len(id) <= MaxSessionIDLen
		for i := 0; i < len(id); i++ {
			if id[i] < 0x21 || id[i] > 0x7E {
				want = false
			}
		}
		why := sessionIDProblem(id)
		if got := why == ""; got != want {
			t.Fatalf("sessionIDProblem(%q) = %q; accepted %v, want %v", id, why, got, want)
		}
		if why != "" {
			if !utf8.ValidString(why) || len(why) > 2*1024 {
				t.Fatalf("refusal text of %d bytes, valid UTF-8 %v", len(why), utf8.ValidString(why))
			}
			return
		}
		req, err := http.NewRequest(http.MethodPost, "http://h/mcp", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header["Mcp-Session-Id"] = []string{id}
		var wire bytes.Buffer
		if err := req.Write(&wire); err != nil {
			t.Fatalf("an accepted id does not make a request: %v", err)
		}
		back, err := http.ReadRequest(bufio.NewReader(&wire))
		if err != nil {
			t.Fatalf("an accepted id makes a request a server cannot read: %v", err)
		}
		if got := back.Header.Values("Mcp-Session-Id"); len(got) != 1 || got[0] != id {
			t.Fatalf("sent %q, the server reads %q", id, got)
		}
	})
}

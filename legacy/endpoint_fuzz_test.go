package legacy

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/internal/redirecttest"
)

// dialTarget is where net/http would connect for u, as net/http itself
// says (redirecttest.DialTarget), independently of package origin.
func dialTarget(u *url.URL) string { return redirecttest.DialTarget(u) }

// passwordMarker is a password that no fuzzed input holds by chance.
const passwordMarker = "pw-Marker-7f3a9c"

// FuzzResolveEndpoint: whatever the endpoint event holds and whatever the
// SSE URL, a resolved endpoint is on the SSE URL's origin as net/http will
// see it — the URL actually POSTed to (its text, parsed again) connects to
// the SSE URL's scheme, host and port — and anything else is refused with
// ErrNoEndpoint or a *CrossOriginError that shows no password.
func FuzzResolveEndpoint(f *testing.F) {
	for _, seed := range []struct{ data, sse string }{
		{"/message?sessionId=abc", "http://127.0.0.1:8080/sse"},
		{"http://127.0.0.1:8080/m", "http://127.0.0.1:8080/sse"},
		{"//evil.example/m", "http://h/sse"},
		{"https://h/m", "http://h/sse"},
		{"http://H:80/m", "http://h/sse"},
		{"http://user:pw@h:81/m", "http://u:secret@h/sse"},
		{"  ../x#frag ", "https://[::1]:8443/a/b"},
		{"http://127.0.0.1:8080@evil/m", "http://127.0.0.1:8080/sse"},
		{"http:%2f%2fevil/m", "http://h/sse"},
		{"\\\\evil\\m", "http://h/sse"},
		{"mailto:h", "http://h/sse"},
		{"", "http://h/sse"},
		{"http://\u0130bm.test/m", "http://ibm.test/sse"},
		{"http://\u212Abc.test/m", "http://kbc.test/sse"},
	} {
		f.Add([]byte(seed.data), seed.sse)
	}
	f.Fuzz(func(t *testing.T, data []byte, sseURL string) {
		home, err := url.Parse(sseURL)
		if err != nil || (home.Scheme != "http" && home.Scheme != "https") || home.Host == "" {
			return // Dial refuses such a URL before any endpoint event
		}
		u, err := resolveEndpoint(data, home, home)
		if err != nil {
			var co *CrossOriginError
			switch {
			case errors.As(err, &co):
				// The same endpoint against the same SSE URL with a
				// password no input holds: its error must not show it.
				// (The password's own text may appear for another reason:
				// the host's name, or the server's endpoint, may hold it.)
				if _, ok := home.User.Password(); ok {
					marked := *home
					marked.User = url.UserPassword(home.User.Username(), passwordMarker)
					_, merr := resolveEndpoint(data, &marked, &marked)
					if merr != nil && strings.Contains(merr.Error(), passwordMarker) && !strings.Contains(string(data), passwordMarker) {
						t.Fatalf("the error shows the SSE URL's password: %v", merr)
					}
				}
			case errors.Is(err, ErrNoEndpoint):
			default:
				t.Fatalf("error %v is neither ErrNoEndpoint nor a *CrossOriginError", err)
			}
			return
		}
		if u.Fragment != "" {
			t.Errorf("endpoint %q keeps a fragment", u)
		}
		req, err := http.NewRequest(http.MethodPost, u.String(), nil)
		if err != nil {
			t.Fatalf("endpoint %q does not make a request: %v", u, err)
		}
		got, want := dialTarget(req.URL), dialTarget(home)
		if got != want || got == "" {
			t.Fatalf("endpoint event %q on %s resolved to %s, which connects to %q, not %q",
				data, sseURL, u, got, want)
		}
	})
}

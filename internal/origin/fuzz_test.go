package origin

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/internal/redirecttest"
	"github.com/anymcp/anymcp/jsonrpc"
)

// dialTarget is where net/http connects for u, as net/http itself says
// (redirecttest.DialTarget): not worked out from the rule under test.
func dialTarget(u *url.URL) string { return redirecttest.DialTarget(u) }

// scrub returns u with other user information and query values: what
// Redact shows of it must be the same as of u.
func scrub(u *url.URL) *url.URL {
	c := *u
	if c.User != nil {
		c.User = url.UserPassword("someone", "other")
	}
	if c.RawQuery != "" {
		parts := strings.Split(c.RawQuery, "&")
		for i, kv := range parts {
			if k, _, ok := strings.Cut(kv, "="); ok {
				parts[i] = k + "=other"
			} else if kv != "" {
				parts[i] = "other"
			}
		}
		c.RawQuery = strings.Join(parts, "&")
	}
	c.Fragment, c.RawFragment = "other", ""
	return &c
}

// FuzzCheck: the redirect decision. A redirect the policy lets through
// connects where the first request did (same scheme, host and port, as
// net/http sees the URL it will request), keeps the method, and comes
// within MaxRedirects; every other one is a *jsonrpc.RedirectError whose
// reason is the first rule broken and whose URLs show no user information
// and no query value.
func FuzzCheck(f *testing.F) {
	for _, seed := range []struct {
		first, loc, method, next string
		status                   int
		hops                     uint8
	}{
		{"http://127.0.0.1:8080/mcp", "/other", "POST", "POST", 307, 1},
		{"http://127.0.0.1:8080/mcp", "http://localhost:8080/mcp", "POST", "POST", 308, 1},
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8081/mcp", "GET", "GET", 302, 1},
		{"https://h/mcp", "http://h:443/mcp", "POST", "POST", 307, 2},
		{"http://h/mcp", "HTTP://H:80/x?token=t0p", "POST", "GET", 303, 1},
		{"http://u:pw@h/mcp?sessionId=s3cr3t", "//h/x?k=v&bare", "DELETE", "DELETE", 307, 6},
		{"http://[::1]:1/", "http://[::1]:1/x", "GET", "GET", 301, 5},
		{"http://h/", "http://h@evil/", "POST", "POST", 307, 1},
		{"http://ibm.test/", "http://\u0130bm.test/", "POST", "POST", 307, 1},
		{"http://kbc.test/", "http://\u212Abc.test/", "POST", "POST", 307, 1},
	} {
		f.Add(seed.first, seed.loc, seed.method, seed.next, seed.status, seed.hops)
	}
	f.Fuzz(func(t *testing.T, first, loc, method, next string, status int, hops uint8) {
		fu, err := url.Parse(first)
		if err != nil || fu.Host == "" {
			return
		}
		tu, err := fu.Parse(loc) // as net/http resolves a Location
		if err != nil {
			return
		}
		n := int(hops%12) + 1
		via := make([]*http.Request, n)
		for i := range via {
			via[i] = &http.Request{Method: method, URL: fu}
		}
		req := &http.Request{Method: next, URL: tu, Response: &http.Response{StatusCode: status}}
		err = Check(req, via)
		if err == nil {
			sent, perr := url.Parse(tu.String()) // what net/http will request
			if perr != nil || tu.Host == "" {
				t.Fatalf("allowed a redirect to %q, which has no host or does not parse (%v)", tu, perr)
			}
			if a, b := dialTarget(sent), dialTarget(fu); a != b {
				t.Fatalf("allowed a redirect from %s to %s: connects to %s, not %s", first, tu, a, b)
			}
			if next != method || n > MaxRedirects {
				t.Fatalf("allowed %s → %s after %d requests", method, next, n)
			}
			return
		}
		var re *jsonrpc.RedirectError
		if !errors.As(err, &re) {
			t.Fatalf("Check returned %T %v", err, err)
		}
		want := jsonrpc.RedirectTooMany
		switch {
		case !Same(fu, tu):
			want = jsonrpc.RedirectCrossOrigin
		case next != method:
			want = jsonrpc.RedirectMethodChange
		}
		if re.Reason != want || re.Status != status || re.Method != method {
			t.Fatalf("RedirectError %+v, want reason %d", re, want)
		}
		// What the error shows does not depend on user information or
		// query values: the same URLs with other ones show the same.
		if re.From != Redact(scrub(fu)) || re.To != Redact(scrub(tu)) {
			t.Fatalf("RedirectError shows %q and %q; with the secrets replaced, %q and %q",
				re.From, re.To, Redact(scrub(fu)), Redact(scrub(tu)))
		}
		_ = re.Error()
	})
}

// FuzzOf: Same is symmetric, and two URLs on the same origin connect to
// the same place (scheme, host and port as net/http sees them); an origin
// reads back as itself.
func FuzzOf(f *testing.F) {
	for _, s := range []string{"http://h/x", "HTTPS://H:443", "http://[::1]/", "http://[fe80::1%25eth0]:8080/", "ws://h", "//0", "a://::"} {
		f.Add(s, "http://h:80/")
	}
	f.Add("http://\u0130bm.test/", "http://ibm.test/")
	f.Add("https://\u212Abc/", "https://kbc/")
	f.Fuzz(func(t *testing.T, a, b string) {
		ua, err1 := url.Parse(a)
		ub, err2 := url.Parse(b)
		if err1 != nil || err2 != nil {
			return
		}
		same := Same(ua, ub)
		if same != Same(ub, ua) {
			t.Fatalf("Same(%q, %q) is not symmetric", a, b)
		}
		if same && dialTarget(ua) != dialTarget(ub) {
			t.Fatalf("Same(%q, %q), but they connect to %s and %s", a, b, dialTarget(ua), dialTarget(ub))
		}
		if !hasOrigin(ua) {
			if Same(ua, ua) {
				t.Fatalf("%q has no origin, yet is on its own", a)
			}
			return
		}
		o := Of(ua)
		back, err := url.Parse(o)
		if err != nil || Of(back) != o {
			t.Fatalf("Of(%q) = %q does not read back as itself (%v)", a, o, err)
		}
		if !Same(ua, ua) || !Same(ua, back) {
			t.Fatalf("%q is not on its own origin %q", a, o)
		}
	})
}

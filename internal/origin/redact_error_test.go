package origin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/anymcp/anymcp/jsonrpc"
)

// secrets are what the URLs of these tests hide; none may be shown.
var secrets = []string{"pa55w0rd", "k3y-in-query", "BareKey", "frag-secret"}

// withSecrets puts a password, an api key, a bare query parameter and a
// fragment into the URL of server s, at path p.
func withSecrets(s, p string) string {
	return strings.Replace(s, "http://", "http://user:pa55w0rd@", 1) + p + "?api_key=k3y-in-query&BareKey#frag-secret"
}

func checkShown(t *testing.T, what string, err error) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(err.Error(), s) {
			t.Errorf("%s: the redacted error holds %q: %v", what, s, err)
		}
	}
	if !strings.Contains(err.Error(), "api_key=…&…") {
		t.Errorf("%s: the redacted error does not name the query's keys: %v", what, err)
	}
	ue, ok := errors.AsType[*url.Error](err)
	if !ok {
		t.Fatalf("%s: errors.As finds no *url.Error in %v", what, err)
	}
	for _, s := range secrets {
		if strings.Contains(ue.URL, s) {
			t.Errorf("%s: the *url.Error errors.As finds holds %q: %q", what, s, ue.URL)
		}
	}
}

// TestRedactErrorRequests: the errors of real requests — a dropped
// connection, a deadline, a refused redirect, a refused connection — show
// their URL redacted, and errors.Is and errors.As find in them what they
// found before.
func TestRedactErrorRequests(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/drop":
			c, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				c.Close()
			}
		case "/hang":
			<-r.Context().Done()
		case "/away":
			// net/http names the URL of the refused redirect.
			http.Redirect(w, r, withSecrets("http://localhost:1", "/elsewhere"), http.StatusTemporaryRedirect)
		}
	}))
	defer srv.Close()
	get := func(raw string, timeout time.Duration) error {
		t.Helper()
		rctx, rcancel := context.WithTimeout(ctx, timeout)
		defer rcancel()
		req, err := http.NewRequestWithContext(rctx, http.MethodGet, raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := Guard(srv.Client()).Do(req)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("GET %s succeeded", raw)
		}
		if !strings.Contains(err.Error(), "k3y-in-query") {
			t.Fatalf("net/http's error no longer shows the query; the test shows nothing: %v", err)
		}
		return err
	}

	err := get(withSecrets(srv.URL, "/drop"), 10*time.Second)
	red := RedactError(err)
	checkShown(t, "dropped connection", red)
	if _, ok := red.(*url.Error); !ok {
		t.Errorf("dropped connection: a *url.Error became a %T", red)
	}
	if errors.Is(err, io.EOF) != errors.Is(red, io.EOF) || !errors.Is(red, io.EOF) {
		t.Errorf("dropped connection: errors.Is(io.EOF) was %v, is %v", errors.Is(err, io.EOF), errors.Is(red, io.EOF))
	}

	err = get(withSecrets(srv.URL, "/hang"), 50*time.Millisecond)
	red = RedactError(err)
	checkShown(t, "deadline", red)
	if !errors.Is(red, context.DeadlineExceeded) {
		t.Errorf("deadline: errors.Is(context.DeadlineExceeded) is false: %v", red)
	}
	if ue := red.(*url.Error); !ue.Timeout() {
		t.Errorf("deadline: Timeout() is false: %v", red)
	}

	err = get(withSecrets(srv.URL, "/away"), 10*time.Second)
	red = RedactError(err)
	checkShown(t, "refused redirect", red)
	if re, ok := errors.AsType[*jsonrpc.RedirectError](red); !ok || re.Reason != jsonrpc.RedirectCrossOrigin {
		t.Errorf("refused redirect: errors.As(*jsonrpc.RedirectError) = %v, %v", re, ok)
	}

	l, lerr := net.Listen("tcp", "127.0.0.1:0")
	if lerr != nil {
		t.Fatal(lerr)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	err = get(withSecrets(closed, "/refused"), 10*time.Second)
	red = RedactError(err)
	checkShown(t, "refused connection", red)
	if op, ok := errors.AsType[*net.OpError](red); !ok || op.Op != "dial" {
		t.Errorf("refused connection: errors.As(*net.OpError) = %v, %v", op, ok)
	}
}

// TestRedactErrorChains: a *url.Error is redacted, and so is one it wraps
// (url.Parse's inside Client.Do's, say); errors.Is and errors.As find in the
// result what they found before; the original is not changed; an error
// that is not a *url.Error, nil, and one already redacted are returned as
// they are.
func TestRedactErrorChains(t *testing.T) {
	raw := "http://user:***@127.0.0.1:1/mcp?api_key=k3y-in-query&BareKey#frag-secret"
	shownURL := "http://127.0.0.1:1/mcp?api_key=…&…"
	ue := &url.Error{Op: "Post", URL: raw, Err: context.DeadlineExceeded}
	nested := &url.Error{Op: "Get", URL: raw, Err: &url.Error{Op: "parse", URL: raw, Err: io.EOF}}
	for name, err := range map[string]error{"url.Error": ue, "url.Error in a url.Error": nested} {
		red := RedactError(err)
		checkShown(t, name, red)
		if want := strings.ReplaceAll(err.Error(), raw, shownURL); red.Error() != want {
			t.Errorf("%s: %q, want %q", name, red.Error(), want)
		}
		if errors.Is(err, context.DeadlineExceeded) != errors.Is(red, context.DeadlineExceeded) ||
			errors.Is(err, io.EOF) != errors.Is(red, io.EOF) {
			t.Errorf("%s: errors.Is finds other errors in %v than in %v", name, red, err)
		}
		if again := RedactError(red); again != red {
			t.Errorf("%s: redacting a redacted error changed it: %v", name, again)
		}
	}
	if got := ue.URL; got != raw {
		t.Errorf("the original *url.Error was changed: %q", got)
	}

	if RedactError(nil) != nil {
		t.Error("RedactError(nil) is not nil")
	}
	plain := fmt.Errorf("modern: %w", errors.New("sentinel"))
	if RedactError(plain) != plain {
		t.Error("an error that is not a *url.Error was replaced")
	}
	shown := &url.Error{Op: "Post", URL: "http://h/mcp?api_key=…", Err: io.EOF}
	if RedactError(shown) != shown {
		t.Error("a *url.Error already redacted was replaced")
	}
}

// TestRedactErrorUnparsable: url.Parse's error repeats the string it
// could not parse, password and key included; redacted, it shows none of
// it.
func TestRedactErrorUnparsable(t *testing.T) {
	_, err := url.Parse("http://user:pa55w0rd@h:port/mcp?api_key=k3y-in-query")
	if err == nil {
		t.Fatal("the URL parsed")
	}
	red := RedactError(err).Error()
	if strings.Contains(red, "pa55w0rd") || strings.Contains(red, "k3y-in-query") || !strings.Contains(red, unparsable) {
		t.Errorf("RedactError = %q", red)
	}
	if got := RedactString("http://user:pa55w0rd@h/mcp?api_key=k3y-in-query#frag-secret"); got != "http://h/mcp?api_key=…" {
		t.Errorf("RedactString = %q", got)
	}
	if got := RedactString("http://h:port/?k3y-in-query"); got != unparsable {
		t.Errorf("RedactString of an unparsable URL = %q", got)
	}
}

// TestRedactErrorParseReason: url.Parse's reason for refusing a URL quotes
// a piece of it, which may be a password's head (an unescaped "/", "?" or
// "#" in a password ends the authority there, and the rest of the password
// is then taken for a port) or a piece of one (an invalid escape). The
// reason is shown with the quoted piece hidden; errors.As still finds it.
func TestRedactErrorParseReason(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{"https://user:pa55/w0rd==@h/mcp", `parse "(an unparsable URL)": invalid port "…" after host`},
		{"http://user:pa55?w0rd@h/mcp", `parse "(an unparsable URL)": invalid port "…" after host`},
		{"http://user:pa55#w0rd@h/mcp", `parse "(an unparsable URL)": invalid port "…" after host`},
		{"http://user:pa55%w0rd@h/mcp", `parse "(an unparsable URL)": invalid URL escape "…"`},
		{"http://user:pa55w0rd@h/mcp\x7f", `parse "(an unparsable URL)": net/url: invalid control character in URL`},
	} {
		_, err := url.Parse(tc.raw)
		if err == nil {
			t.Fatalf("%q parsed", tc.raw)
		}
		red := RedactError(err)
		if got := red.Error(); got != tc.want || strings.Contains(got, "pa55") {
			t.Errorf("RedactError(url.Parse(%q)) = %q, want %q", tc.raw, got, tc.want)
		}
		inner := errors.Unwrap(err)
		if !errors.Is(red, inner) {
			t.Errorf("%q: errors.Is does not find url.Parse's reason %v in %v", tc.raw, inner, red)
		}
	}
	_, err := url.Parse("http://user:pa55%w0rd@h/mcp")
	if _, ok := errors.AsType[url.EscapeError](RedactError(err)); !ok {
		t.Error("errors.As finds no url.EscapeError")
	}
}

package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestURLSecretsNotShown: a target URL's user, password, query values
// (named like a key or not, or bare) and fragment appear nowhere in what
// mcpcall prints — its error, in words or as JSON, its debug log and
// negotiation report, its usage errors — when the server drops the
// connection or the URL is refused.
func TestURLSecretsNotShown(t *testing.T) {
	secrets := []string{"alice7", "pa55w0rd", "SeCrEtKeY123", "BareKey", "plainval", "frag-secret"}
	drop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
			c.Close()
		}
	}))
	defer drop.Close()
	withSecrets := func(base string) string {
		return strings.Replace(base, "://", "://alice7:pa55w0rd@", 1) + "/mcp?api_key=SeCrEtKeY123&BareKey&x=plainval#frag-secret"
	}
	u := withSecrets(drop.URL)
	for _, args := range [][]string{
		{"ping", u},
		{"ping", "--json", u},
		{"ping", "-v", "--log-level", "debug", u},
		{"ping", "-e", "A=1", u},
		{"ping", "--transport", "stdio", u},
		{"ping", withSecrets("ftp://h")},
		{"ping", withSecrets("http://h:port")},
	} {
		res := newRunner(t).run(args...)
		if res.code == 0 {
			t.Errorf("mcpcall %s succeeded", strings.Join(args[:len(args)-1], " "))
		}
		out := res.stdout + res.stderr
		if !strings.Contains(out, "api_key=…") && !strings.Contains(out, "(an unparsable URL)") {
			t.Errorf("mcpcall %s: the output names no URL:\n%s", strings.Join(args[:len(args)-1], " "), out)
		}
		for _, s := range secrets {
			if strings.Contains(out, s) {
				t.Errorf("mcpcall %s: the output shows %q:\n%s", strings.Join(args[:len(args)-1], " "), s, out)
			}
		}
	}
}

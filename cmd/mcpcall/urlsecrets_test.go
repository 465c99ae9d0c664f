package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/testservers/oauthserver"
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

// TestLoginAndServersHideURLSecrets: auth login --json and servers (in
// words and --json) show a URL as every other output does, its user,
// password, query values and fragment hidden, where they printed it as
// written; servers keeps a ${VAR} template, which is no secret, and hides
// a config entry's literal credential variable as it hides its headers.
func TestLoginAndServersHideURLSecrets(t *testing.T) {
	_, ps := protectedServer(t, oauthserver.AuthServerOptions{})
	r := newRunner(t)
	r.goos = "linux"
	r.env["DISPLAY"] = ":0"
	opened := 0
	r.browser = headlessBrowser(t, &opened)
	for _, args := range [][]string{{"auth", "login", "--json"}, {"auth", "login"}} {
		res := r.runOK(append(args, ps.URL+"?api_key=QK5ecretValue")...)
		if strings.Contains(res.stdout+res.stderr, "QK5ecretValue") || !strings.Contains(res.stdout, "api_key=…") {
			t.Errorf("mcpcall %s: want the api_key hidden:\nstdout: %s\nstderr: %s", strings.Join(args, " "), res.stdout, res.stderr)
		}
	}

	r = newRunner(t)
	writeFile(t, r.cwd+"/.mcp.json", `{"mcpServers":{
		"literal":{"type":"http","url":"https://u5er:pa55@mcp.example.com/mcp?api_key=LITERALsecret99#fragSecret","headers":{"X-Api-Key":"LITERALheader99"}},
		"templated":{"type":"http","url":"http://${U}:${P}@127.0.0.1:${PORT:-8080}/mcp?api_key=${KEY}&v=2#${F}"},
		"stdio":{"command":"srv","env":{"API_KEY":"LITERALenv99","TOKEN":"${TOKEN}","MODE":"fast"}}}}`)
	for _, args := range [][]string{{"servers"}, {"servers", "--json"}} {
		res := r.runOK(args...)
		res.stdout = strings.ReplaceAll(res.stdout, `\u0026`, "&") // as encoding/json writes it
		for _, s := range []string{"u5er", "pa55", "LITERALsecret99", "fragSecret", "LITERALheader99", "LITERALenv99"} {
			if strings.Contains(res.stdout, s) {
				t.Errorf("mcpcall %s shows %q:\n%s", strings.Join(args, " "), s, res.stdout)
			}
		}
		for _, s := range []string{"https://mcp.example.com/mcp?api_key=…", "http://${U}:${P}@127.0.0.1:${PORT:-8080}/mcp?api_key=${KEY}&v=…#${F}"} {
			if !strings.Contains(res.stdout, s) {
				t.Errorf("mcpcall %s: want %s in\n%s", strings.Join(args, " "), s, res.stdout)
			}
		}
	}
	res := r.runOK("servers", "--json")
	if !strings.Contains(res.stdout, `"TOKEN": "${TOKEN}"`) || !strings.Contains(res.stdout, `"MODE": "fast"`) {
		t.Errorf("servers --json: want the env's template and its plain value shown:\n%s", res.stdout)
	}
}

package main

import (
	"context"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// freePort returns a loopback port the OS had free a moment ago: listened
// on (port 0) and closed at once.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestAuthLoginCallbackPort: --callback-port chooses the redirect
// listener's port (the redirect URI http://localhost:PORT/callback, as for
// a config entry's callbackPort, which it overrides); 0 takes any free
// port (http://127.0.0.1:PORT/callback); a value that is not a port is a
// usage error, before anything is asked.
func TestAuthLoginCallbackPort(t *testing.T) {
	as, ps := protectedServer(t, oauthserver.AuthServerOptions{})
	r := newRunner(t)
	r.goos = "linux"
	r.env["DISPLAY"] = ":0"
	opened := 0
	follow := headlessBrowser(t, &opened)
	var redirect string // the redirect_uri of the last authorization URL
	r.browser = func(ctx context.Context, u string) error {
		if pu, err := url.Parse(u); err == nil {
			redirect = pu.Query().Get("redirect_uri")
		}
		return follow(ctx, u)
	}

	port := freePort(t)
	r.runOK("auth", "login", "--callback-port", strconv.Itoa(port), ps.URL)
	if want := "http://localhost:" + strconv.Itoa(port) + "/callback"; redirect != want {
		t.Errorf("--callback-port %d: redirect_uri %q, want %q", port, redirect, want)
	}

	r.runOK("auth", "login", "--callback-port", "0", ps.URL)
	if u, err := url.Parse(redirect); err != nil || u.Hostname() != "127.0.0.1" || u.Port() == "" || u.Port() == "0" || u.Path != "/callback" {
		t.Errorf("--callback-port 0: redirect_uri %q, want http://127.0.0.1:PORT/callback on a port of the OS's", redirect)
	}

	// The flag beats the config entry's callbackPort.
	cfgPort, flagPort := freePort(t), freePort(t)
	writeFile(t, filepath.Join(r.cwd, ".mcp.json"), `{"mcpServers": {"prot": {"type": "http", "url": "`+ps.URL+`", "oauth": {"callbackPort": `+strconv.Itoa(cfgPort)+`}}}}`)
	r.runOK("auth", "login", "prot")
	if want := "http://localhost:" + strconv.Itoa(cfgPort) + "/callback"; redirect != want {
		t.Errorf("config callbackPort %d: redirect_uri %q, want %q", cfgPort, redirect, want)
	}
	r.runOK("auth", "login", "--callback-port", strconv.Itoa(flagPort), "prot")
	if want := "http://localhost:" + strconv.Itoa(flagPort) + "/callback"; redirect != want {
		t.Errorf("--callback-port %d over the config's %d: redirect_uri %q, want %q", flagPort, cfgPort, redirect, want)
	}

	before := as.Stats().Authorizations
	for _, bad := range []string{"-1", "65536", "x"} {
		if res := r.run("auth", "login", "--callback-port", bad, ps.URL); res.code != exitUsage {
			t.Errorf("--callback-port %s: exit %d, want %d; stderr %s", bad, res.code, exitUsage, res.stderr)
		}
	}
	if opened != 4 || as.Stats().Authorizations != before {
		t.Errorf("browser opened %d times, want 4; authorizations after the bad ports: %d, want %d", opened, as.Stats().Authorizations, before)
	}
}

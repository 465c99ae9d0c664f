package auth_test

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/anymcp/anymcp/auth"
	"github.com/anymcp/anymcp/client"
	"github.com/anymcp/anymcp/internal/logtest"
	"github.com/anymcp/anymcp/testservers/oauthserver"
)

// TestServerURLSecretsNotShown: the server URL the host gives may hold a
// password and an api key (and a fragment). The Authorizer sends its
// requests there, but its errors and its logs, at every level, show the
// URL redacted: when a person is needed and none can come, when the
// authorization succeeds, when the server drops every connection, and
// when the URL is refused.
func TestServerURLSecretsNotShown(t *testing.T) {
	secrets := []string{"pa55-w0rd-in-url", "k3y-in-query-789", "BareKey", "frag-secret"}
	withSecrets := func(raw string) string {
		return strings.Replace(raw, "http://", "http://user:pa55-w0rd-in-url@", 1) + "?api_key=k3y-in-query-789&BareKey#frag-secret"
	}
	var logs logtest.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var shown []string // errors

	f := setup(t, oauthserver.AuthServerOptions{}, oauthserver.ProtectedOptions{})
	u := withSecrets(f.ps.URL)

	// No Authorize function: a person is needed, and none can come.
	noPerson, err := auth.New(auth.Config{RedirectURL: redirectURL, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	err = connect(testContext(t), u, noPerson, client.WithLogger(logger))
	var ire *auth.InteractionRequiredError
	if !errors.As(err, &ire) {
		t.Fatalf("err = %v, want an InteractionRequiredError", err)
	}
	if want := strings.SplitN(f.ps.URL, "?", 2)[0] + "?api_key=…&…"; ire.Server != want {
		t.Errorf("InteractionRequiredError.Server = %q, want %q", ire.Server, want)
	}
	shown = append(shown, err.Error())

	// The authorization goes through.
	a := f.authorizer(t, auth.Config{Logger: logger})
	if err := connect(testContext(t), u, a, client.WithLogger(logger)); err != nil {
		t.Fatal(err)
	}

	// A server that drops every connection: the probe fails, and so does
	// discovery.
	drop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
			c.Close()
		}
	}))
	defer drop.Close()
	if _, err := a.Login(testContext(t), withSecrets(drop.URL+"/mcp")); err == nil {
		t.Error("Login to a server that drops every connection succeeded")
	} else {
		shown = append(shown, err.Error())
	}

	// A URL that is not http(s) is refused, and so is one that does not
	// parse.
	for _, bad := range []string{"ftp://user:pa55-w0rd-in-url@h/mcp?api_key=k3y-in-query-789", "http://user:pa55-w0rd-in-url@h:port/?k3y-in-query-789"} {
		if _, err := a.Transport(bad, nil); err == nil {
			t.Errorf("Transport(%q) succeeded", bad)
		} else {
			shown = append(shown, err.Error())
		}
	}

	text := logs.String()
	for _, want := range []string{`msg="OAuth authorization server discovered"`, `msg="OAuth authorization done"`, `msg="OAuth probe failed`} {
		if !strings.Contains(text, want) {
			t.Errorf("the logs have no %s record: nothing to check there", want)
		}
	}
	for _, s := range secrets {
		if i := strings.Index(text, s); i >= 0 {
			t.Errorf("the logs hold %q: …%s…", s, text[max(0, i-200):min(len(text), i+50)])
		}
		for _, e := range shown {
			if strings.Contains(e, s) {
				t.Errorf("an error holds %q: %s", s, e)
			}
		}
	}
}

const wellKnownOAuth = "/.well-known/oauth-authorization-server"

// TestMetadataURLsShownRedacted: the URLs a server names for its metadata
// (the challenge's resource_metadata, its authorization servers) are shown
// redacted too, whether the location drops the connection, holds a
// document for another resource, or names an issuer with a query: a
// server may put in them what the host put in its own URL.
func TestMetadataURLsShownRedacted(t *testing.T) {
	const secret = "s1gn4ture"
	var self string
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+self+r.URL.Query().Get("prm")+`?sig=`+secret+`"`)
		w.WriteHeader(http.StatusUnauthorized)
	})
	mux.HandleFunc("/drop", func(w http.ResponseWriter, r *http.Request) {
		if c, _, err := w.(http.Hijacker).Hijack(); err == nil {
			c.Close()
		}
	})
	mux.HandleFunc(wellKnownOAuth, func(w http.ResponseWriter, r *http.Request) {
		// A document for another issuer: the fallback of 2025-03-26
		// fails too, and the error lists the locations tried.
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"issuer":"http://127.0.0.1:1","token_endpoint":"http://127.0.0.1:1/token"}`)
	})
	mux.HandleFunc("/other", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"resource":"`+self+`/elsewhere","authorization_servers":["`+self+`"]}`)
	})
	mux.HandleFunc("/tenant", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"resource":"`+self+`/mcp","authorization_servers":["`+self+`/as?tenant=`+secret+`"]}`)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	self = srv.URL
	var logs logtest.Buffer
	a, err := auth.New(auth.Config{RedirectURL: redirectURL, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	for _, prm := range []string{"/drop", "/other", "/tenant"} {
		_, err := a.Login(testContext(t), srv.URL+"/mcp?prm="+prm)
		if err == nil {
			t.Fatalf("%s: Login succeeded", prm)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error shows the metadata URL's query: %v", prm, err)
		}
		if !strings.Contains(err.Error(), "=…") {
			t.Errorf("%s: the error names no metadata URL: %v", prm, err)
		}
	}
	if text := logs.String(); strings.Contains(text, secret) {
		t.Errorf("the logs show the metadata URL's query:\n%s", text)
	}
}

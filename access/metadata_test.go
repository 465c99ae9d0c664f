package access

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/anymcp/anymcp/auth"
)

func TestResourceMetadataURL(t *testing.T) {
	for resource, want := range map[string]string{
		"https://gw.example/mcp/team-a": "https://gw.example/.well-known/oauth-protected-resource/mcp/team-a",
		"https://gw.example/mcp/":       "https://gw.example/.well-known/oauth-protected-resource/mcp",
		"https://gw.example":            "https://gw.example/.well-known/oauth-protected-resource",
		"http://127.0.0.1:8080/a%2Fb":   "http://127.0.0.1:8080/.well-known/oauth-protected-resource/a%2Fb",
	} {
		got, err := ResourceMetadata{Resource: resource}.URL()
		if err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", resource, got, err, want)
		}
	}
	for _, bad := range []string{"", "/mcp", "ftp://x/mcp", "https://u:p@x/mcp", "https://x/mcp#f"} {
		if _, err := (ResourceMetadata{Resource: bad}).URL(); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestResourceMetadataHandler(t *testing.T) {
	if _, err := (ResourceMetadata{Resource: "https://gw.example/mcp"}).Handler(); err == nil || !strings.Contains(err.Error(), "authorization server") {
		t.Fatalf("no authorization server: %v", err)
	}
	if _, err := (ResourceMetadata{Resource: "https://gw.example/mcp", AuthorizationServers: []string{"http://auth.example"}}).Handler(); err == nil {
		t.Fatal("an http authorization server was accepted")
	}
	h, err := ResourceMetadata{Resource: "https://gw.example/mcp", AuthorizationServers: []string{"https://auth.example"}, ScopesSupported: []string{"mcp"}}.Handler()
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/.well-known/oauth-protected-resource/mcp", nil))
	var doc map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil || w.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("%v %q", err, w.Body.String())
	}
	if doc["resource"] != "https://gw.example/mcp" || doc["authorization_servers"].([]any)[0] != "https://auth.example" || doc["bearer_methods_supported"].([]any)[0] != "header" {
		t.Fatalf("%v", doc)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/", nil))
	if w.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST: %d", w.Code)
	}
}

// tokenIssuer is the fake issuer with a client_credentials token endpoint
// that signs access tokens for the resource asked for (RFC 8707).
func tokenIssuer(t *testing.T) *issuer {
	is := newIssuer(t)
	is.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/token" {
			is.serve(w, r)
			return
		}
		id, secret, _ := r.BasicAuth()
		if r.PostFormValue("grant_type") != "client_credentials" || id != "m2m" || secret != "m2m-secret" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"invalid_grant"}`)
			return
		}
		tok := sign(t, jwt.SigningMethodES256, testKeys().ec, "ec1", is.claims(map[string]any{
			"aud": r.PostFormValue("resource"), "scope": r.PostFormValue("scope"), "sub": "m2m",
		}))
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600})
	})
	return is
}

// Our own client (package auth) finds the metadata, gets a token for the
// resource, and is admitted: by the challenge's resource_metadata, and
// without one by the path-based well-known URL the MCP specification
// tells clients to try first.
func TestOwnClientFindsMetadata(t *testing.T) {
	for _, inChallenge := range []bool{true, false} {
		is := tokenIssuer(t)
		mux := http.NewServeMux()
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		md := ResourceMetadata{Resource: srv.URL + "/mcp/team-a", AuthorizationServers: []string{is.URL}, ScopesSupported: []string{"mcp"}}
		mdURL, err := md.URL()
		if err != nil {
			t.Fatal(err)
		}
		mdHandler, err := md.Handler()
		if err != nil {
			t.Fatal(err)
		}
		var mdHits atomic.Int64
		mux.Handle(strings.TrimPrefix(mdURL, srv.URL), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { mdHits.Add(1); mdHandler.ServeHTTP(w, r) }))
		p, err := JWT(JWTConfig{Issuer: is.URL, Audience: md.Resource, Scopes: []string{"mcp"}, HTTPClient: is.Client()})
		if err != nil {
			t.Fatal(err)
		}
		challengeURL := ""
		if inChallenge {
			challengeURL = mdURL
		}
		var grant Grant
		mux.Handle("/mcp/team-a", Middleware(p, challengeURL, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			grant, _ = GrantOf(r.Context())
			_, _ = io.WriteString(w, "ok")
		})))

		a, err := auth.New(auth.Config{Grant: auth.GrantClientCredentials, ClientID: "m2m", ClientSecret: "m2m-secret"})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := a.Transport(md.Resource, srv.Client().Transport)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, md.Resource, nil)
		resp, err := (&http.Client{Transport: tr}).Do(req)
		cancel()
		if err != nil {
			t.Fatalf("challenge %v: %v", inChallenge, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(body) != "ok" || grant.Subject != "m2m" {
			t.Fatalf("challenge %v: %d %q, grant %+v", inChallenge, resp.StatusCode, body, grant)
		}
		if mdHits.Load() != 1 {
			t.Fatalf("challenge %v: the metadata was read %d times", inChallenge, mdHits.Load())
		}
		srv.Client().CloseIdleConnections()
		is.Client().CloseIdleConnections()
	}
}
